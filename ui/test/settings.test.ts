import { describe, expect, it } from 'vitest';

import type { AgentStatus } from '../src/types';
import { agentFound } from '../src/views/settings';

const status = (over: Partial<AgentStatus>): AgentStatus => ({
  agent: 'gemini',
  name: 'Gemini CLI',
  enabled: true,
  folders: [],
  files: 0,
  chats: 0,
  messages: 0,
  incomplete: 0,
  problems: {},
  skipped: [],
  ...over,
});

describe('an agent in the settings', () => {
  it('says what was found and read', () => {
    expect(agentFound(status({ files: 1, chats: 1 }))).toBe('1 file, 1 chat');
  });

  it('says what was read in part and passed over, and why', () => {
    const a = status({
      files: 3,
      chats: 2,
      incomplete: 1,
      problems: { bad_json: 2 },
      skipped: [
        { path: '/h/.gemini/tmp/owl/chats/session-a.json', reason: 'a Gemini CLI session continued in the .jsonl beside it', kind: 'gemini' },
        { path: '/h/.gemini/tmp/owl/chats/session-b.json', reason: 'a Gemini CLI session continued in the .jsonl beside it', kind: 'gemini' },
      ],
    });
    expect(agentFound(a)).toBe(
      '3 files, 2 chats · 1 read in part (bad_json × 2) · 2 passed over (a Gemini CLI session continued in the .jsonl beside it)',
    );
  });
});
