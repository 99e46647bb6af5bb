import { expect } from 'chai';
import { approvalText, terminalSafe } from '../core/terminal-text.ts';

describe('terminalSafe', () => {
  it('shows every control and bidi character as \\uXXXX, and keeps text, tabs and newlines', () => {
    const unsafe = [
      '\u0000',
      '\u0007',
      '\b',
      '\r',
      '\u000b',
      '\u001b',
      '\u007f',
      '\u0085',
      '\u009b',
      '\u061c',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
    ];
    for (const c of unsafe)
      expect(terminalSafe(`a${c}b`)).to.equal(`a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    expect(terminalSafe('rm -rf /tmp/x \u202e; gnp.txt')).to.equal('rm -rf /tmp/x \\u202e; gnp.txt');
    expect(terminalSafe('\u001b[2J\u001b]0;title\u0007')).to.equal('\\u001b[2J\\u001b]0;title\\u0007');
    const safe = 'line one\n\tindented — naïve café 日本語 עברית مرحبا 😀 \\ "quoted"';
    expect(terminalSafe(safe)).to.equal(safe);
  });

  it('shows invisible characters too: zero-width spaces and joiners, word joiners, the soft hyphen, the BOM, line and paragraph separators, tag characters', () => {
    for (const c of ['\u200b', '\u200c', '\u200d', '\u2060', '\u2064', '\u00ad', '\ufeff', '\u2028', '\u2029']) {
      expect(terminalSafe(`a${c}b`)).to.equal(`a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    }
    // A tag character (U+E0001) lies past the BMP: escaped as its surrogate pair, still valid JSON.
    expect(terminalSafe('a\u{e0001}b')).to.equal('a\\udb40\\udc01b');
    expect(JSON.parse(terminalSafe(JSON.stringify('a\u{e0001}\u200bb')))).to.equal('a\u{e0001}\u200bb');
  });

  it('leaves JSON meaning the same: an escaped string parses to the original', () => {
    const value = { command: 'echo \u202eevil\u2066 \u0085 \u007f' };
    const json = JSON.stringify(value);
    expect(json).to.match(/[\u202e\u2066\u0085\u007f]/); // JSON.stringify leaves these raw
    expect(terminalSafe(json)).to.not.match(/[\u202e\u2066\u0085\u007f]/);
    expect(JSON.parse(terminalSafe(json))).to.deep.equal(value);
  });

  it('shows every invisible character too: format characters (zero-width, tags, BOM), line and paragraph separators, lone surrogates', () => {
    // Each would let the prompt show a string that looks like another: `ls` followed by text in tag
    // characters (U+E0000 block) prints as `ls`, a zero-width space splits a word invisibly.
    const unsafe = [
      '\u00ad',
      '\u180e',
      '\u200b',
      '\u200c',
      '\u200d',
      '\u2028',
      '\u2029',
      '\u2060',
      '\u2064',
      '\u206a',
      '\u206f',
      '\ufeff',
      '\ufff9',
      '\ufffb',
      '\ud800',
      '\udfff',
    ];
    for (const c of unsafe)
      expect(terminalSafe(`a${c}b`)).to.equal(`a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    // An astral one is shown as its UTF-16 pair, as JSON would write it.
    expect(terminalSafe('ls\u{e0020}\u{e0072}\u{e006d}')).to.equal('ls\\udb40\\udc20\\udb40\\udc72\\udb40\\udc6d');
    const value = { command: 'ls\u{e0072}\u200b\u2028\ud800' };
    expect(JSON.parse(terminalSafe(JSON.stringify(value)))).to.deep.equal(value);
  });
});

describe('approvalText', () => {
  it('is terminalSafe for a short input without long runs', () => {
    const input = '{"command":"ls\u202e  -la","code":"\\n        return x"}';
    expect(approvalText(input)).to.equal(terminalSafe(input));
  });

  it('counts a run of 32 or more of one character, escaped ones and astral ones too', () => {
    expect(approvalText(`a${' '.repeat(31)}b`)).to.equal(`a${' '.repeat(31)}b`);
    expect(approvalText(`a${' '.repeat(32)}b`)).to.equal('a⟨32 × U+0020⟩b');
    expect(approvalText(`a${'\u200b'.repeat(40)}b`)).to.equal('a⟨40 × U+200B⟩b');
    expect(approvalText(`a${'\u{1F600}'.repeat(40)}b`)).to.equal('a⟨40 × U+1F600⟩b');
  });

  it('shows a long text by its first 1,200 and last 800 characters', () => {
    const text = 'ab'.repeat(5_000);
    expect(approvalText(text)).to.equal(`${text.slice(0, 1_200)} ⟨8,000 characters not shown⟩ ${text.slice(-800)}`);
  });
});
