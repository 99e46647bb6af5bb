/** `rousseau-host call TOOL [JSON | -]`: one call through the whole pipeline. */
import {
  hostFromFlags,
  EXIT,
  print,
  printError,
  printJson,
  readStdinInput,
  UsageError,
  type Command,
} from './command.ts';
import { terminalApprover } from './approve-prompt.ts';
import { headlessElicitor } from './elicit-prompt.ts';
import { hostCommand } from './host-command.ts';

export const call: Command = {
  name: 'call',
  summary:
    'Call one tool through the whole pipeline (validation, policy, isolation, timeout, output cap). Exit 0 on success, 1 when the result is an error.',
  usage: 'call TOOL [JSON | -] [--json] [--yes]',
  options: { yes: { type: 'boolean', short: 'y' } },
  async run({ values, positionals, stop }) {
    const [tool, inputArg, ...rest] = positionals;
    if (!tool || rest.length)
      throw new UsageError('call takes a TOOL name and at most one JSON input (or - to read it from stdin)');
    const approve = values.yes ? () => true : terminalApprover();
    const host = await hostFromFlags(values, approve ? { approve } : {});
    try {
      const input = inputArg === '-' ? await readStdinInput(host, stop.signal) : (inputArg ?? '{}');
      // One call, no conversation: a question the tool asks is dismissed (docs/plugins.md, "Asking the user").
      const result = await host.call(tool, input, { signal: stop.signal, sessionId: 'cli', elicit: headlessElicitor });
      // What is printed may be piped on: no result leaves before its audit lines are in the file.
      await host.auditWritten();
      if (values.json) {
        printJson({ tool, ...result });
      } else if (!result.isError) {
        // The text names each image, audio or resource block (type, MIME type, size, URI): base64
        // never reaches a terminal. `--json` has the blocks themselves.
        print(result.content);
        // Structured data is what MCP clients get as structuredContent: shown unless the text
        // already holds its JSON (a tool that gave no text of its own), so an author sees it without --json.
        const data = result.data === undefined ? undefined : JSON.stringify(result.data);
        if (data !== undefined && !result.content.includes(data)) print(`data: ${data}`);
      } else {
        // A failure is for the person, whole on stderr: stdout carries results (and `--json`) only,
        // so `call … > out.txt` never leaves half an error in the file.
        printError(`error (${result.code ?? 'tool_error'}): ${result.content}`);
        // The tool may be one a plugin failed to load: the person at the terminal is told which
        // (the result itself names no failed plugin: over MCP a caller would learn of them).
        if (result.code === 'unknown_tool') {
          const failed = host.plugins().filter((p) => p.status !== 'loaded');
          if (failed.length)
            printError(
              `note: ${failed.map((p) => `plugin ${p.name} ${p.status}`).join(', ')}; \`${hostCommand(host.workspace)} tools\` says why`,
            );
        }
      }
      return result.isError ? EXIT.failure : EXIT.ok;
    } finally {
      await host.close();
    }
  },
};
