import { expect } from 'chai';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { hostCommand } from '../../core/cli/host-command.ts';
import { ROOT, tempDir } from '../helpers.ts';

describe('hostCommand: how a hint names the host', () => {
  it('npx rousseau-host where this host is the project’s own dependency (here or above), rousseau-host elsewhere', () => {
    const t = tempDir();
    try {
      mkdirSync(join(t.dir, 'app', 'node_modules'), { recursive: true });
      mkdirSync(join(t.dir, 'app', 'src'));
      mkdirSync(join(t.dir, 'other', 'node_modules', 'rousseau-host'), { recursive: true });
      // npm links a folder dependency: the link resolves to this host.
      symlinkSync(ROOT, join(t.dir, 'app', 'node_modules', 'rousseau-host'));
      expect(hostCommand(join(t.dir, 'app'))).to.equal('npx rousseau-host');
      expect(hostCommand(join(t.dir, 'app', 'src'))).to.equal('npx rousseau-host');
      // Another copy of the host is not the one running: npx would run that one, not this.
      expect(hostCommand(join(t.dir, 'other'))).to.equal('rousseau-host');
      expect(hostCommand(t.dir)).to.equal('rousseau-host');
    } finally {
      t.cleanup();
    }
  });
});
