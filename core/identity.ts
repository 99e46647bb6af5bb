/** Who the host is: its name and version, for `--version` and for MCP peers (`serverInfo` as a server, `clientInfo` as a client). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './paths.ts';

export const HOST_INFO = {
  name: 'rousseau-host',
  version: (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
};
