/**
 * The REPL's slash commands: one table, each entry its name, what it takes, a line for `/help`,
 * what it does and, optionally, how to complete its argument. A new command is one more entry.
 */
import type { ToolInfo } from '../../types.ts';
import { clip } from './style.ts';
import type { SessionStore } from './sessions.ts';
import type { UsageLog } from './usage.ts';

/** What a command can see and change of the REPL it runs in. */
export interface ReplControl {
  tools(): readonly ToolInfo[];
  readonly provider: { name: string; model: string };
  readonly sessionId: string;
  readonly usage: UsageLog;
  readonly store: SessionStore;
  /** A message for people (stderr). */
  say(text: string): void;
  /** A new, empty conversation in a new session. */
  clear(): void;
  /** The same conversation carried on with another model of the same provider. */
  setModel(model: string): void;
  /** Carries on a saved session. */
  resume(id: string): void;
  /** Loads plugins again from their files and says what changed. */
  reload(plugin?: string): Promise<void>;
}

export interface SlashCommand {
  name: string;
  /** How its argument reads in `/help`, e.g. `<id>`. */
  args?: string;
  summary: string;
  /** `'exit'` ends the REPL. */
  run(repl: ReplControl, arg: string): 'exit' | undefined | Promise<'exit' | undefined>;
  /** Candidates for its argument. */
  complete?(repl: ReplControl): string[];
}

export const COMMANDS: SlashCommand[] = [
  {
    name: 'help',
    summary: 'this list',
    run(repl) {
      const width = Math.max(...COMMANDS.map((c) => commandUsage(c).length));
      repl.say(
        [
          ...COMMANDS.map((c) => `  ${commandUsage(c).padEnd(width)}  ${c.summary}`),
          '  Tab completes commands and tool names; Ctrl-C cancels a turn; Ctrl-C twice or Ctrl-D exits.',
        ].join('\n'),
      );
      return undefined;
    },
  },
  {
    name: 'tools',
    summary: 'the tools the model can call',
    run(repl) {
      const tools = repl.tools();
      if (!tools.length) {
        repl.say('No tools are loaded (see rousseau-host tools).');
        return undefined;
      }
      const width = Math.max(...tools.map((t) => t.name.length));
      repl.say(
        [
          `${tools.length} tool(s):`,
          ...tools.map(
            (t) => `  ${t.name.padEnd(width)}  ${clip(t.description.split('\n')[0] ?? '', 90)} (${t.plugin})`,
          ),
        ].join('\n'),
      );
      return undefined;
    },
  },
  {
    name: 'clear',
    summary: 'start a new conversation (the current one stays saved)',
    run(repl) {
      repl.clear();
      return undefined;
    },
  },
  {
    name: 'model',
    args: '[name]',
    summary: 'show the model, or switch to another of the same provider',
    run(repl, arg) {
      if (arg) repl.setModel(arg);
      else repl.say(`${repl.provider.name} (${repl.provider.model})`);
      return undefined;
    },
  },
  {
    name: 'sessions',
    summary: 'the saved conversations of this workspace',
    run(repl) {
      repl.say(describeSessions(repl.store, repl.sessionId));
      return undefined;
    },
  },
  {
    name: 'resume',
    args: '<id>',
    summary: 'carry on a saved conversation',
    run(repl, arg) {
      if (!arg) repl.say(`/resume takes a session id:\n${describeSessions(repl.store, repl.sessionId)}`);
      else repl.resume(arg);
      return undefined;
    },
    complete: (repl) => repl.store.list().map((s) => s.id),
  },
  {
    name: 'reload',
    args: '[plugin]',
    summary: 'load plugins again from their files (all, or the one named)',
    async run(repl, arg) {
      await repl.reload(arg || undefined);
      return undefined;
    },
    complete: (repl) => [...new Set(repl.tools().map((t) => t.plugin))],
  },
  {
    name: 'usage',
    summary: 'tokens used, per turn and for the session',
    run(repl) {
      repl.say(`Usage (session ${repl.sessionId}):\n${repl.usage.report()}`);
      return undefined;
    },
  },
  {
    name: 'exit',
    summary: 'leave (the conversation stays saved)',
    run: () => 'exit',
  },
];

function commandUsage(c: SlashCommand): string {
  return `/${c.name}${c.args ? ` ${c.args}` : ''}`;
}

/** The saved sessions, newest first, the current one marked. */
export function describeSessions(store: SessionStore, current?: string): string {
  const sessions = store.list();
  if (!sessions.length) return `No saved sessions in ${store.dir}.`;
  return sessions
    .slice(0, 20)
    .map(
      (s) =>
        `${s.id === current ? '*' : ' '} ${s.id}  ${s.updated.toISOString().slice(0, 16).replace('T', ' ')}  ${String(s.messages).padStart(3)} msg  ${clip(s.title, 60)}`,
    )
    .join('\n');
}

/** Runs `/name arg`, or says the command is unknown. */
export async function runCommand(repl: ReplControl, line: string): Promise<'exit' | undefined> {
  const [, name = '', arg = ''] = /^\/(\S*)\s*(.*)$/.exec(line.trim()) ?? [];
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    repl.say(`Unknown command /${name}; /help lists them.`);
    return undefined;
  }
  return command.run(repl, arg.trim());
}

/** readline's completer: command names after `/`, a command's arguments, tool names elsewhere. */
export function completer(repl: ReplControl): (line: string) => [string[], string] {
  return (line) => {
    const command = /^\/(\S*)(\s+(\S*))?$/.exec(line);
    if (command) {
      if (command[2] === undefined) {
        const names = COMMANDS.map((c) => `/${c.name}`);
        return [names.filter((n) => n.startsWith(line)), line];
      }
      const spec = COMMANDS.find((c) => c.name === command[1]);
      const word = command[3] ?? '';
      return [(spec?.complete?.(repl) ?? []).filter((a) => a.startsWith(word)), word];
    }
    const word = /\S*$/.exec(line)?.[0] ?? '';
    return [
      repl
        .tools()
        .map((t) => t.name)
        .filter((n) => n.startsWith(word)),
      word,
    ];
  };
}
