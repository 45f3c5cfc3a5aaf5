import { afterEach, describe, expect, it, vi } from 'vitest';

import { api, ApiError, apiConfig, configureApi, configureFromWindow, errorFromResponse, queryString, request } from '../src/api';

function res(status: number, body: string, statusText = '') {
  return new Response(body, { status, statusText, headers: { 'content-type': 'application/json' } });
}

afterEach(() => configureApi({ base: '', token: null, fetch: (...a) => globalThis.fetch(...a) }));

describe('errorFromResponse', () => {
  it('keeps the API’s own code and message', async () => {
    const e = await errorFromResponse(res(409, '{"code":"dependencies_open","message":"T-2 waits for T-1 to be done first"}'));
    expect(e).toBeInstanceOf(ApiError);
    expect([e.status, e.code, e.message]).toEqual([409, 'dependencies_open', 'T-2 waits for T-1 to be done first']);
  });

  it('derives a code from the status when the body has none', async () => {
    const e = await errorFromResponse(res(401, '{"message":"not logged in: run `tether open` for a login link"}'));
    expect([e.code, e.message]).toEqual(['unauthorized', 'not logged in: run `tether open` for a login link']);
    expect((await errorFromResponse(res(403, ''))).code).toBe('forbidden');
    expect((await errorFromResponse(res(404, '{}'))).code).toBe('not_found');
    expect((await errorFromResponse(res(500, 'boom'))).code).toBe('server_error');
  });

  it('uses a short text body or the status line as the message', async () => {
    expect((await errorFromResponse(res(502, 'bad gateway text'))).message).toBe('bad gateway text');
    expect((await errorFromResponse(res(503, '', 'Service Unavailable'))).message).toBe('503 Service Unavailable');
  });
});

describe('request', () => {
  it('sends X-Tether on writes only, JSON bodies, the cookie, and the optional bearer token', async () => {
    const calls: [string, RequestInit][] = [];
    const fake = vi.fn(async (url: string | URL | Request, init?: RequestInit) => {
      calls.push([String(url), init ?? {}]);
      return res(200, '{"tasks":[]}');
    });
    configureApi({ fetch: fake as typeof fetch });
    await api.tasks({ status: ['todo', 'done'], ready: true });
    await request('PATCH', '/api/tasks/T-1', { body: { status: 'done' } });
    const [getUrl, getInit] = calls[0];
    expect(getUrl).toBe('/api/tasks?status=todo&status=done&ready=1');
    expect(getInit.credentials).toBe('same-origin');
    expect((getInit.headers as Record<string, string>)['X-Tether']).toBeUndefined();
    expect((getInit.headers as Record<string, string>).Authorization).toBeUndefined();
    const [, patchInit] = calls[1];
    expect((patchInit.headers as Record<string, string>)['X-Tether']).toBe('1');
    expect(patchInit.body).toBe('{"status":"done"}');

    configureApi({ base: 'http://127.0.0.1:47821', token: () => 'tok' });
    await api.agents().catch(() => {});
    expect(calls[2][0]).toBe('http://127.0.0.1:47821/api/agents');
    expect((calls[2][1].headers as Record<string, string>).Authorization).toBe('Bearer tok');
  });

  it('throws ApiError with the API’s code', async () => {
    configureApi({ fetch: (async () => res(409, '{"code":"illegal_transition","message":"nope"}')) as typeof fetch });
    await expect(api.patchTask('T-1', { status: 'in_review' })).rejects.toMatchObject({ status: 409, code: 'illegal_transition', message: 'nope' });
  });

  it('maps a network failure to code "network"', async () => {
    configureApi({ fetch: (async () => { throw new TypeError('Failed to fetch'); }) as typeof fetch });
    await expect(api.status()).rejects.toMatchObject({ status: 0, code: 'network' });
  });

  it('treats 202 as success without a body', async () => {
    configureApi({ fetch: (async () => new Response(null, { status: 202 })) as typeof fetch });
    await expect(api.reindex()).resolves.toBeUndefined();
  });

  it('reads the desktop shell’s injected config', () => {
    configureFromWindow({ __TETHER_API__: { base: 'http://127.0.0.1:9', token: 'abc' } } as unknown as Window);
    expect(apiConfig().base).toBe('http://127.0.0.1:9');
    expect(apiConfig().token?.()).toBe('abc');
    expect(queryString({ a: 'x y', b: undefined, c: false, d: [1, 2] })).toBe('?a=x+y&d=1&d=2');
  });
});
