import { describe, expect, it } from 'vitest';
import { isLogLevel, readableLine } from '../../src/runtime/index.js';

describe('readableLine (logs when stderr is a terminal)', () => {
  it('prints time, level, message and the fields of one pino JSON line', () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.parse('2026-12-03T12:00:01.250Z'),
      msg: 'hook',
      controller: 'node-profile',
      status: 400,
      error: { code: 'BadHookRequest', message: 'parent.metadata.name: expected string' },
    });
    expect(readableLine(line)).toBe(
      '12:00:01 INFO  hook controller=node-profile status=400 error={"code":"BadHookRequest","message":"parent.metadata.name: expected string"}',
    );
  });

  it('quotes a string field with spaces and passes a line that is not JSON through', () => {
    expect(readableLine(JSON.stringify({ level: 50, time: 0, msg: 'x', err: 'a b' }))).toBe(
      '00:00:00 ERROR x err="a b"',
    );
    expect(readableLine('plain text')).toBe('plain text');
  });
});

describe('isLogLevel', () => {
  it.each([
    ['info', true],
    ['silent', true],
    ['verbose', false],
    ['INFO', false],
  ])('%s → %s', (text, want) => {
    expect(isLogLevel(text)).toBe(want);
  });
});
