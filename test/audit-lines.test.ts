// What an audit line says, built without a host or a file: the tests of core/audit-lines.ts.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { AuditInput, auditedInput, auditLine, callEntry, decisionEntry, lineHead } from '../core/audit-lines.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('audit lines', () => {
  it('auditedInput keeps short input whole', () => {
    expect(auditedInput('{"a":"é"}', 100)).to.deep.equal({
      inputSha256: sha256('{"a":"é"}'),
      inputBytes: 10,
      input: '{"a":"é"}',
    });
    expect(auditedInput('{"a":"é"}', 7)).to.include({ input: '{"a":"', inputTruncated: true });
  });

  it('writes each line exactly as JSON.stringify would, time first, whatever the values hold', () => {
    const time = Date.UTC(2026, 11, 2, 18, 0, 0, 123);
    const strings = [
      'plain',
      '',
      'say "hi"',
      'back\\slash',
      'tab\tnew\nline\u0000\u001f',
      'del\u007f',
      'é and ü',
      'emoji 😀',
      'lone \ud800 surrogate',
      '</script>',
      '{"text":"hello"}',
    ];
    const values: unknown[] = [
      ...strings,
      0,
      -0,
      1.5,
      -2e-7,
      1e21,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      false,
      null,
      undefined,
      () => 1,
      Symbol('s'),
      { nested: ['a', 1, null] },
      [1, 'two'],
      new Date(time),
    ];
    for (const [i, value] of values.entries()) {
      const key = strings[i % strings.length]!;
      const record = { event: 'call' as const, callId: `c${i}`, [key]: value, n: i };
      expect(auditLine(time, record), `value #${i}`).to.equal(
        JSON.stringify({ time: '2026-12-02T18:00:00.123Z', ...record }),
      );
    }
    expect(() => auditLine(time, { event: 'call', n: 1n })).to.throw(TypeError, /BigInt/);
  });

  it('stamps each millisecond as toISOString does, within a second and across seconds, days and years', () => {
    const record = { event: 'call' as const };
    const starts = [Date.UTC(2026, 11, 31, 23, 59, 59), Date.UTC(1969, 11, 31, 23, 59, 59), 253402300799000];
    for (const start of starts)
      for (const time of [
        start,
        start + 1,
        start + 9,
        start + 10,
        start + 99,
        start + 100,
        start + 999,
        start + 1000,
        start + 1001,
        start + 1.5,
      ])
        expect(auditLine(time, record), `${time}`).to.equal(
          JSON.stringify({ time: new Date(time).toISOString(), ...record }),
        );
  });

  it("writes the dispatcher's decision and call lines exactly as JSON.stringify would their fields, whatever the strings hold", () => {
    const time = '2026-12-02T18:00:00.123Z';
    const odd = [
      'plain',
      'say "hi"',
      'back\\slash',
      'tab\tnew\nline\u0000',
      'é 😀',
      'lone \ud800 surrogate',
      '</script>',
    ];
    for (const [i, text] of odd.entries()) {
      const canonical = JSON.stringify({ text });
      const input = new AuditInput(canonical, i % 2 ? 8 : 1024); // odd rows: cut at the cap
      const kept = auditedInput(canonical, i % 2 ? 8 : 1024);
      const decision = {
        callId: text,
        sessionId: text,
        plugin: text,
        tool: text,
        decision: 'ask' as const,
        rule: text,
        reason: text,
        answer: 'approved',
        approvalMs: 1.5,
        source: 'authorize',
      };
      expect(decisionEntry({ ...decision, input })(lineHead(time)), `decision #${i}`).to.equal(
        JSON.stringify({ time, event: 'decision', ...decision, ...kept }, [
          'time',
          'event',
          'callId',
          'sessionId',
          'plugin',
          'tool',
          'inputSha256',
          'inputBytes',
          'input',
          'inputTruncated',
          'decision',
          'rule',
          'reason',
          'answer',
          'approvalMs',
          'source',
        ]),
      );
      const call = { callId: text, sessionId: text, plugin: text, tool: text };
      const decided = { decision: 'deny' as const, rule: text };
      const ended = {
        outcome: 'error' as const,
        code: 'denied' as const,
        durationMs: 0.25,
        approvalMs: 2,
        content: text,
      };
      expect(
        callEntry({ ...call, input, ...decided, ...ended, truncated: true })(lineHead(time)),
        `call #${i}`,
      ).to.equal(
        JSON.stringify({
          time,
          event: 'call',
          ...call,
          inputSha256: kept.inputSha256,
          ...decided,
          outcome: 'error',
          code: 'denied',
          durationMs: 0.25,
          approvalMs: 2,
          bytes: Buffer.byteLength(text),
          truncated: true,
        }),
      );
    }
    // Optional fields left out are absent, not null.
    const bare = callEntry({ callId: 'c', tool: 't', outcome: 'ok', durationMs: 1, content: '' })(lineHead(time));
    expect(bare).to.equal(
      `{"time":"${time}","event":"call","callId":"c","tool":"t","outcome":"ok","durationMs":1,"bytes":0}`,
    );
  });

  it('writes durationMs and approvalMs as JSON writes the microsecond-rounded number, whatever it is', () => {
    const time = '2026-12-02T18:00:00.123Z';
    const values = [0, 0.001, 0.01, 0.1, 0.5, 0.25, 0.999, 1, 1.5, 12.34, 999.999, 1000, 86_400_000.001, 1e12 + 0.5];
    // The dispatcher's rounding of a random duration, many times over.
    for (let i = 0; i < 2000; i++) values.push(Math.round(Math.random() * 10 ** (i % 9) * 1000) / 1000);
    // Not a whole microsecond, or out of any duration's range: still what JSON writes.
    values.push(0.0001, 1.23456, -0.001, 1e21, Number.MAX_SAFE_INTEGER);
    for (const ms of values) {
      const line = callEntry({ callId: 'c', tool: 't', outcome: 'ok', durationMs: ms, approvalMs: ms, content: '' })(
        lineHead(time),
      );
      expect(line, String(ms)).to.equal(
        JSON.stringify({
          time,
          event: 'call',
          callId: 'c',
          tool: 't',
          outcome: 'ok',
          durationMs: ms,
          approvalMs: ms,
          bytes: 0,
        }),
      );
    }
  });
});
