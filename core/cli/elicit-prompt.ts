/**
 * A tool's `ctx.elicit` on the terminal: the message, then one question per field (choices as a
 * numbered list, booleans y/n, the default in brackets: an empty line takes it), then whether to
 * send the answers. An answer that does not fit its field is said why and asked again. Ctrl-C or
 * Ctrl-D at any question cancels the form (the turn goes on: the tool hears `cancel`); "n" at the
 * end declines it. Everything shown is escaped, as in the approval prompt (approve-prompt.ts).
 */
import type { ElicitField, ElicitResult, ElicitValue } from '../contract.ts';
import { fieldChoices, fieldValueProblem } from '../questions.ts';
import { terminalSafe } from '../terminal-text.ts';
import type { ElicitHandler } from '../types.ts';
import type { Ask, LinePrompt } from './approve-prompt.ts';

const CANCEL: ElicitResult = Object.freeze({ action: 'cancel' });

/** Where no one can answer (`-p`, piped stdin, `call`): every question is dismissed. */
export const headlessElicitor: ElicitHandler = async () => CANCEL;

/** `ctx.elicit` as a form on `prompt`'s terminal; it waits its turn behind other dialogs. */
export function elicitorOn(prompt: LinePrompt): ElicitHandler {
  return ({ message, requestedSchema }, { tool, signal }) =>
    prompt.open(async (ask, say) => {
      const write = (text: string) => say(terminalSafe(text));
      write(`\n${tool} asks: ${message}\n  (an empty answer takes the [default]; Ctrl-C cancels)`);
      const required = new Set(requestedSchema.required ?? []);
      const content: Record<string, ElicitValue> = {};
      for (const [name, field] of Object.entries(requestedSchema.properties)) {
        const value = await askField(ask, name, field, required.has(name), write);
        if (value === CANCELLED) return CANCEL;
        if (value !== undefined) content[name] = value;
      }
      const send = await ask('Send these answers? [y]es / [n]o: ');
      if (send === null || send === undefined) return CANCEL;
      return /^y(es)?$/i.test(send) ? { action: 'accept', content } : { action: 'decline' };
    }, signal);
}

const CANCELLED = Symbol('cancelled');

/** Asks one field until its answer fits; `undefined` leaves an optional field out. */
async function askField(
  ask: Ask,
  name: string,
  field: ElicitField,
  required: boolean,
  write: (text: string) => void,
): Promise<ElicitValue | undefined | typeof CANCELLED> {
  const choices = fieldChoices(field);
  const label = `${field.title ?? name}${field.description ? ` (${field.description})` : ''}`;
  if (choices) write(choices.map((c, i) => `    ${i + 1}) ${c.title}`).join('\n'));
  const hint =
    field.type === 'boolean'
      ? ' [y/n]'
      : field.type === 'array'
        ? ' (numbers, separated by commas)'
        : choices
          ? ` [1-${choices.length}]`
          : '';
  const fallback = field.default === undefined ? '' : ` [${shown(field)}]`;
  const question = terminalSafe(`  ${label}${hint}${required ? '' : ' (optional)'}${fallback}: `);
  for (;;) {
    const text = await ask(question);
    if (text === null || text === undefined) return CANCELLED;
    if (text === '') {
      if (field.default !== undefined) return field.default;
      if (!required) return undefined;
      write('  an answer is required');
      continue;
    }
    const value = parse(
      field,
      text,
      choices?.map((c) => c.const),
    );
    const why = value === undefined ? 'is not understood' : fieldValueProblem(field, value);
    if (!why) return value;
    write(`  that answer ${why}`);
  }
}

/** What the user typed, as the field's type: a number, y/n, a choice by its number or its value. */
function parse(field: ElicitField, text: string, choices: string[] | undefined): ElicitValue | undefined {
  const pick = (item: string) => {
    const n = Number(item);
    return choices && Number.isInteger(n) && n >= 1 && n <= choices.length ? choices[n - 1]! : item;
  };
  switch (field.type) {
    case 'boolean':
      return /^y(es)?$/i.test(text) ? true : /^no?$/i.test(text) ? false : undefined;
    case 'number':
    case 'integer': {
      const n = Number(text);
      return Number.isNaN(n) ? undefined : n;
    }
    case 'array':
      return text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
        .map(pick);
    default:
      return choices ? pick(text) : text;
  }
}

/** A field's default as the user would type it. */
function shown(field: ElicitField): string {
  const value = field.default;
  if (typeof value === 'boolean') return value ? 'y' : 'n';
  return Array.isArray(value) ? value.join(', ') : String(value);
}
