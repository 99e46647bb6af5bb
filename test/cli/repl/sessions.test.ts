import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '../../../core/agent/messages.ts';
import { SESSION_BINARY_CHARS, SessionStore } from '../../../core/cli/repl/sessions.ts';
import { PNG } from '../../agent/helpers.ts';
import { tempDir } from '../../helpers.ts';

const line = (record: object) => `${JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', ...record })}\n`;

describe('saved sessions', () => {
  it("keeps a result's small images and saves one over the limit as a text naming it", () => {
    const tmp = tempDir();
    try {
      const store = new SessionStore(tmp.dir);
      const session = store.open();
      const large = 'A'.repeat(SESSION_BINARY_CHARS + 4);
      const call: Message = { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'shot', arguments: '{}' }] };
      const results: Message = {
        role: 'tool',
        results: [
          {
            callId: 'c1',
            name: 'shot',
            content: 'two shots',
            isError: false,
            blocks: [
              { type: 'image', data: PNG, mimeType: 'image/png' },
              { type: 'image', data: large, mimeType: 'image/png' },
            ],
          },
        ],
      };
      session.write({ type: 'message', message: { role: 'user', content: 'hi' } });
      session.write({ type: 'message', message: call });
      session.write({ type: 'message', message: results });
      session.close();
      const loaded = store.load(session.id).messages.at(-1);
      expect(loaded?.role === 'tool' && loaded.results[0]!.blocks).to.deep.equal([
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'text',
          text: '[image image/png, 48.0 KB] (not kept in the session file)',
        },
      ]);
      expect(readFileSync(session.file, 'utf8')).not.to.include(large);
    } finally {
      tmp.cleanup();
    }
  });

  it('refuses a saved result whose blocks are not content blocks, as a damaged line', () => {
    const tmp = tempDir();
    try {
      const store = new SessionStore(tmp.dir);
      mkdirSync(store.dir, { recursive: true });
      const result = (blocks: unknown) => ({
        type: 'message',
        message: { role: 'tool', results: [{ callId: 'c1', name: 'shot', content: 'x', isError: false, blocks }] },
      });
      const call = { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'shot', arguments: '{}' }] };
      tmp.write(
        join('.rousseau', 'sessions', 's1.jsonl'),
        line({ type: 'message', message: call }) +
          line(result([{ type: 'text', text: 'ok' }])) +
          line(result([{ type: 'image', data: 5, mimeType: 'image/png' }])),
      );
      const loaded = store.load('s1');
      expect(loaded.messages).to.have.length(2);
      expect(loaded.warning).to.match(/line 3 is damaged/);
    } finally {
      tmp.cleanup();
    }
  });

  it('writes one timestamped JSON line per record and reads the conversation back', () => {
    const tmp = tempDir();
    try {
      const store = new SessionStore(tmp.dir);
      const session = store.open();
      session.write({ type: 'session', id: session.id, provider: 'openai', model: 'm' });
      session.write({ type: 'message', message: { role: 'user', content: 'hi' } });
      session.write({ type: 'usage', usage: { inputTokens: 3, outputTokens: 1 } });
      session.write({ type: 'usage', usage: { inputTokens: 5, outputTokens: 2 }, costUsd: 0.25 });
      session.close();
      const lines = readFileSync(session.file, 'utf8').trimEnd().split('\n');
      expect(lines.map((l) => Object.keys(JSON.parse(l))[0])).to.deep.equal(['ts', 'ts', 'ts', 'ts']);
      const loaded = store.load(session.id);
      expect(loaded).to.deep.equal({
        id: session.id,
        messages: [{ role: 'user', content: 'hi' }],
        usage: [
          { usage: { inputTokens: 3, outputTokens: 1 } },
          { usage: { inputTokens: 5, outputTokens: 2 }, costUsd: 0.25 },
        ],
      });
      expect(store.latest()).to.equal(session.id);
    } finally {
      tmp.cleanup();
    }
  });

  it('stops at a damaged line with a warning, and drops a call whose results were not saved', () => {
    const tmp = tempDir();
    try {
      const store = new SessionStore(tmp.dir);
      tmp.write(
        '.rousseau/sessions/s1.jsonl',
        line({ type: 'message', message: { role: 'user', content: 'go' } }) +
          line({
            type: 'message',
            message: { role: 'assistant', text: 'x', toolCalls: [{ id: 'c', name: 't', arguments: '{}' }] },
          }) +
          'not json\n' +
          line({ type: 'message', message: { role: 'user', content: 'after the damage' } }),
      );
      const loaded = store.load('s1');
      expect(loaded.messages).to.deep.equal([{ role: 'user', content: 'go' }]);
      expect(loaded.warning).to.equal('session s1: line 3 is damaged; loaded the 2 line(s) before it');
      expect(() => store.load('../../etc/passwd')).to.throw('is not a session id');
      expect(() => store.load('nope')).to.throw('no saved session "nope"');
    } finally {
      tmp.cleanup();
    }
  });

  it('refuses to write through a symlinked .rousseau in the workspace', () => {
    const tmp = tempDir();
    try {
      mkdirSync(join(tmp.dir, 'elsewhere'));
      symlinkSync(join(tmp.dir, 'elsewhere'), join(tmp.dir, '.rousseau'));
      const session = new SessionStore(tmp.dir).open();
      expect(() => session.write({ type: 'message', message: { role: 'user', content: 'hi' } })).to.throw(/symlink/);
      expect(existsSync(join(tmp.dir, 'elsewhere', 'sessions'))).to.equal(false);
    } finally {
      tmp.cleanup();
    }
  });

  it('makes session files readable by their owner only', () => {
    const tmp = tempDir();
    try {
      const session = new SessionStore(tmp.dir).open();
      session.write({ type: 'message', message: { role: 'user', content: 'the key is in .env' } });
      session.close();
      expect(statSync(session.file).mode & 0o777).to.equal(0o600);
    } finally {
      tmp.cleanup();
    }
  });

  it('neither lists nor loads a session file planted as a symlink or a FIFO, and does not hang on one', () => {
    const tmp = tempDir();
    try {
      const store = new SessionStore(tmp.dir);
      tmp.write('outside.jsonl', line({ type: 'message', message: { role: 'user', content: 'not a session' } }));
      tmp.write('.rousseau/sessions/real.jsonl', line({ type: 'message', message: { role: 'user', content: 'hi' } }));
      symlinkSync(join(tmp.dir, 'outside.jsonl'), join(store.dir, 'linked.jsonl'));
      execFileSync('mkfifo', [join(store.dir, 'fifo.jsonl')]);
      expect(store.list().map((s) => s.id)).to.deep.equal(['real']);
      expect(() => store.load('linked')).to.throw(/is a symlink/);
      expect(() => store.load('fifo')).to.throw(/not a regular file/);
    } finally {
      tmp.cleanup();
    }
  });

  it('loads nothing through a symlinked .rousseau in the workspace', () => {
    const tmp = tempDir();
    try {
      tmp.write('elsewhere/sessions/s.jsonl', line({ type: 'message', message: { role: 'user', content: 'hi' } }));
      symlinkSync(join(tmp.dir, 'elsewhere'), join(tmp.dir, '.rousseau'));
      const store = new SessionStore(tmp.dir);
      expect(store.list()).to.deep.equal([]);
      expect(() => store.load('s')).to.throw(/symlink/);
    } finally {
      tmp.cleanup();
    }
  });

  it('takes a record of the wrong shape for a damaged line: a wrong type never reaches the list or a provider', () => {
    const tmp = tempDir();
    try {
      const store = new SessionStore(tmp.dir);
      const ok = line({ type: 'message', message: { role: 'user', content: 'fine' } });
      for (const [id, bad] of [
        ['user', { type: 'message', message: { role: 'user', content: 5 } }],
        ['assistant', { type: 'message', message: { role: 'assistant', text: 'x', toolCalls: [{ id: 'c' }] } }],
        ['tool', { type: 'message', message: { role: 'tool', results: [{ callId: 'c', content: 'r' }] } }],
        ['usage', { type: 'usage', usage: { inputTokens: '3', outputTokens: 1 } }],
      ] as const) {
        tmp.write(`.rousseau/sessions/${id}.jsonl`, ok + line(bad));
        const loaded = store.load(id);
        expect(loaded.messages, id).to.deep.equal([{ role: 'user', content: 'fine' }]);
        expect(loaded.usage, id).to.deep.equal([]);
        expect(loaded.warning, id).to.equal(`session ${id}: line 2 is damaged; loaded the 1 line(s) before it`);
      }
      expect(store.list().map((s) => s.title)).to.deep.equal(['fine', 'fine', 'fine', 'fine']);
    } finally {
      tmp.cleanup();
    }
  });
});
