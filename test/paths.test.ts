// openHostFile: how the host opens the files it writes in a workspace it does not control.
import { expect } from 'chai';
import { closeSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { openHostFile } from '../core/paths.ts';
import { tempDir } from './helpers.ts';

describe('openHostFile', () => {
  let t: ReturnType<typeof tempDir>;
  let workspace: string;
  beforeEach(() => {
    t = tempDir();
    workspace = join(t.dir, 'ws');
    mkdirSync(workspace);
    writeFileSync(join(t.dir, 'keep'), 'kept\n');
  });
  afterEach(() => t.cleanup());

  const write = (file: string, how: 'append' | 'replace', text: string) => {
    const fd = openHostFile(file, workspace, how);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  };

  it('replaces a file of its own, and refuses a hard link before truncating anything', () => {
    const file = join(workspace, 'rousseau.config.ts');
    write(file, 'replace', 'first version, longer\n');
    write(file, 'replace', 'second\n');
    expect(readFileSync(file, 'utf8')).to.equal('second\n');
    const linked = join(workspace, 'linked.ts');
    linkSync(join(t.dir, 'keep'), linked);
    expect(() => openHostFile(linked, workspace, 'replace')).to.throw(`${linked} has 2 hard links`);
    expect(readFileSync(join(t.dir, 'keep'), 'utf8')).to.equal('kept\n');
  });

  it('checks every directory between the workspace and the file, not only the last', () => {
    mkdirSync(join(workspace, 'state'));
    symlinkSync(t.dir, join(workspace, 'state', 'deeper'));
    expect(() => openHostFile(join(workspace, 'state', 'deeper', 'keep'), workspace)).to.throw(
      `${join(workspace, 'state', 'deeper')} is a symlink`,
    );
    expect(readFileSync(join(t.dir, 'keep'), 'utf8')).to.equal('kept\n');
  });

  it('opens a file outside the workspace as the config named it, links included', () => {
    symlinkSync(join(t.dir, 'keep'), join(t.dir, 'named-link'));
    write(join(t.dir, 'named-link'), 'append', 'appended\n');
    expect(readFileSync(join(t.dir, 'keep'), 'utf8')).to.equal('kept\nappended\n');
  });
});
