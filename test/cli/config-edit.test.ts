// Editing a config's plugins as text: what is around the array (comments, strings that look like
// code, other keys) stays as it was, and removing an entry gives back the file it was added to.
import { expect } from 'chai';
import { addEntry, removeEntry } from '../../core/cli/config-edit.ts';

const TS = 'rousseau.config.ts';
const text = (edit: ReturnType<typeof addEntry>) => ('text' in edit ? edit.text : `(refused: ${edit.reason})`);

describe('config edit', () => {
  it('appends to one-line and multi-line arrays, and removes to the same text', () => {
    const cases = [
      ['export default { plugins: [] };\n', "export default { plugins: ['p'] };\n"],
      ["export default { plugins: ['./a'] };\n", "export default { plugins: ['./a', 'p'] };\n"],
      [
        "export default {\n  plugins: [\n    './a', // the first\n  ],\n};\n",
        "export default {\n  plugins: [\n    './a', // the first\n    'p',\n  ],\n};\n",
      ],
      [
        'export default {\n  plugins: [\n    // none yet\n  ],\n};\n',
        "export default {\n  plugins: [\n    // none yet\n    'p',\n  ],\n};\n",
      ],
    ] as const;
    for (const [before, after] of cases) {
      expect(text(addEntry(TS, before, 'p'))).to.equal(after);
      expect(text(removeEntry(TS, after, 'p'))).to.equal(before);
    }
  });

  it("writes a string's quotes, backslashes and line breaks as escapes: the value stays one string", () => {
    const value = "it's\\ two\nlines\r\u2028";
    const after = text(addEntry(TS, 'export default { plugins: [] };\n', { module: 'p', options: { note: value } }));
    const literal = /note: ('.*') \}/.exec(after)?.[1];
    expect(after.split('\n')).to.have.length(2); // one line, and the final newline
    expect(new Function(`return ${literal}`)()).to.equal(value);
  });

  it('is not fooled by comments and strings that look like a plugins array', () => {
    const before =
      "// plugins: ['commented']\nconst note = 'plugins: [x]';\nexport default { /* plugins: [] */ plugins: ['a]b'], note };\n";
    expect(text(addEntry(TS, before, 'p'))).to.equal(before.replace("['a]b']", "['a]b', 'p']"));
  });

  it('removes an object entry by its module, and refuses what it cannot edit', () => {
    const before = "export default { plugins: [{ module: 'p', isolation: 'process' }, 'q'] };\n";
    expect(text(removeEntry(TS, before, 'p'))).to.equal("export default { plugins: ['q'] };\n");
    expect(removeEntry(TS, before, 'nope'))
      .to.have.property('reason')
      .that.match(/no entry naming 'nope'/);
    expect(addEntry(TS, 'export default { plugins: list };\n', 'p')).to.deep.equal({
      reason: 'its plugins are not written as a literal array',
    });
    expect(addEntry('.rousseaurc.yaml', 'plugins: []\n', 'p')).to.have.property('reason');
  });

  it('removes only the entries whose own module is the name: not one naming it deeper, and one written with escapes', () => {
    const before =
      "export default { plugins: [{ module: './a', options: { module: './b', note: \"module: './b'\" } }, './b'] };\n";
    expect(text(removeEntry(TS, before, './b'))).to.equal(
      "export default { plugins: [{ module: './a', options: { module: './b', note: \"module: './b'\" } }] };\n",
    );
    expect(text(removeEntry(TS, before, './a'))).to.equal("export default { plugins: ['./b'] };\n");
    // What `add` wrote for a name with a quote, a backslash or a line break, `remove` finds.
    for (const name of ["it's", 'back\\slash', 'two\nlines', 'é\u2028']) {
      const empty = 'export default { plugins: [] };\n';
      for (const entry of [name, { module: name, isolation: 'worker' }]) {
        const added = text(addEntry(TS, empty, entry));
        expect(text(removeEntry(TS, added, name)), name).to.equal(empty);
      }
    }
    expect(text(removeEntry(TS, 'export default { plugins: ["\\u0070", "q"] };\n', 'p'))).to.equal(
      'export default { plugins: ["q"] };\n',
    );
    const after = "export default { plugins: [{ options: { a: [1, ','] }, /* module: 'q', */ module: 'p' }, 'q'] };\n";
    expect(text(removeEntry(TS, after, 'p'))).to.equal("export default { plugins: ['q'] };\n");
    expect(text(removeEntry(TS, "export default { plugins: [{ /* module: 'p', */ module: 'x' }] };\n", 'p'))).to.match(
      /refused: no entry naming 'p'/,
    );
  });

  it('adds the key to an exported object that has none', () => {
    expect(text(addEntry(TS, 'export default defineConfig({ builtins: false });\n', 'p'))).to.equal(
      "export default defineConfig({\n  plugins: ['p'], builtins: false });\n",
    );
  });
});
