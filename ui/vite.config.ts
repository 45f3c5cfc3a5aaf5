import { defineConfig } from 'vitest/config';

// `npm run dev`: Vite serves the UI and forwards the API, the event stream and the login link
// to a running `tether serve` (TETHER_PORT, default 47821). Log in once through the link that
// `tether open --print` prints, but with Vite's port instead of the daemon's.
declare const process: { env: Record<string, string | undefined> };
const daemon = `http://127.0.0.1:${process.env.TETHER_PORT || '47821'}`;

export default defineConfig({
  // Relative asset URLs: the same dist works at `/` of the daemon and inside the Tauri window.
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 800 },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/api': { target: daemon, changeOrigin: true },
      '/login': { target: daemon, changeOrigin: true },
    },
  },
  test: {
    environment: 'node',
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
  },
});
