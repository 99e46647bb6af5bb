import { expect } from 'chai';
import { BACKTRACK_MAX_TEXT, linearRegExp, schemaPatternRegExp } from '../core/linear-regex.ts';

describe('core/linear-regex', () => {
  it('compiles what the linear engine runs, and refuses the rest saying why', () => {
    expect(linearRegExp('^(a+)+$').test('aaa')).to.equal(true);
    for (const source of ['(a)\\1', '(?=a)', '(?<!a)b', 'a{1,64}']) {
      expect(() => linearRegExp(source), source).to.throw(
        `/${source}/ uses a backreference, a lookaround or a counted repeat over 16`,
      );
    }
    expect(() => linearRegExp('(')).to.throw(SyntaxError);
  });

  it('matches a long text on the linear engine itself, where backtracking from each start never falls back', () => {
    // /[a-z]*q0/ backtracks a little from each of 40,000 start positions: V8 never switches engines
    // on its own, and the match held the thread for seconds.
    const engines = (re: RegExp, text: string) => {
      const used: string[] = [];
      const test = RegExp.prototype.test;
      RegExp.prototype.test = function (this: RegExp, t: string) {
        used.push(this.flags.includes('l') ? 'linear' : 'backtracking');
        return test.call(this, t);
      };
      try {
        return { matched: re.test(text), used };
      } finally {
        RegExp.prototype.test = test;
      }
    };
    const long = 'a'.repeat(40_000);
    const short = 'a'.repeat(BACKTRACK_MAX_TEXT);
    for (const re of [linearRegExp('[a-z]*q0'), schemaPatternRegExp('[a-z]*q0')]) {
      expect(engines(re, long)).to.deep.equal({ matched: false, used: ['linear'] });
      expect(engines(re, `${long}q0`)).to.deep.equal({ matched: true, used: ['linear'] });
      expect(engines(re, short)).to.deep.equal({ matched: false, used: ['backtracking'] });
      expect(engines(re, 'abq0')).to.deep.equal({ matched: true, used: ['backtracking'] });
    }
    // A policy rule's flags go to both engines alike.
    expect(engines(linearRegExp('a.b', 's'), `${'x'.repeat(100)}a\nb`).matched).to.equal(true);
  });

  describe('schema patterns', () => {
    // Each pattern against strings, as the u flag reads it and as the host runs it.
    const CASES: [string, string[]][] = [
      ['^[a-z]{2,20}$', ['a', 'ab', 'a'.repeat(20), 'a'.repeat(21), 'AB']],
      ['^(?:ab){3}c{0,2}?$', ['ababab', 'abababcc', 'abababccc', 'abab']],
      ['^\\d{4}-\\d{2}(-\\d{2})?$', ['2026-12', '2026-12-03', '2026-1']],
      ['^(?<word>\\w+)\\s{1,}\\.{2,}$', ['hi ..', 'hi.', 'hi  ...']],
      ['x{17,}', ['x'.repeat(16), `y${'x'.repeat(17)}`]],
      ['^[\\]{}-]+$', ['{}]-', 'a']],
      ['^\\u00e9\\x41[\\u0100-\\u017f]$', ['éAā', 'éAa']],
    ];
    for (const [pattern, inputs] of CASES) {
      it(`reads ${pattern} as the u flag does`, () => {
        const unicode = new RegExp(pattern, 'u');
        const linear = schemaPatternRegExp(pattern);
        expect(inputs.map((s) => linear.test(s))).to.deep.equal(inputs.map((s) => unicode.test(s)));
        expect(() => new RegExp(linear.source, 'l')).not.to.throw();
      });
    }

    it('refuses what needs the u flag or backtracking, naming it', () => {
      const refusals: [string, string][] = [
        ['(a)\\1', 'backreference'],
        ['\\k<n>(?<n>a)', 'backreference'],
        ['a(?=b)', 'lookaround'],
        ['\\p{L}+', 'Unicode property class'],
        ['\\u{1F600}', 'code point escape'],
        ['\\uD83D\\uDE00', 'surrogate escape'],
        ['[😀]', 'outside the Basic Multilingual Plane'],
        ['(', 'not a valid regular expression'],
        ['a{2', 'not a valid regular expression'],
        ['(?:(?:a{100}){100}){100}', 'repeats too much'],
        // Nine characters that made V8's regex compiler end the process at its first match.
        ['x{0,2800}', 'nests more than 1000 groups'],
        ['x{0,1000000}', 'nests more than 1000 groups'],
      ];
      for (const [pattern, says] of refusals) expect(() => schemaPatternRegExp(pattern), pattern).to.throw(says);
      // Within the bound, written out and matched (a common limit too).
      expect(schemaPatternRegExp('x{0,1000}').test('xx')).to.equal(true);
      expect(schemaPatternRegExp('^[a-zA-Z0-9]{1,255}$').test('abc')).to.equal(true);
    });

    it('counts an astral character as two units for . (the one semantic the u flag gives and this does not)', () => {
      expect(/^.$/u.test('😀')).to.equal(true);
      expect(schemaPatternRegExp('^.$').test('😀')).to.equal(false);
      expect(schemaPatternRegExp('^.{2}$').test('😀')).to.equal(true);
    });
  });
});
