/**
 * What a tool asks with `ctx.elicit` and `ctx.sample`, and what comes back, checked on the host's
 * side for every isolation. A request is copied (plain JSON, nothing a plugin's getters can change
 * later) and held to MCP's shapes before anyone is asked; an answer is held to them before the tool
 * sees it: a form's values must match the form (docs/plugins.md, "Asking the user").
 */
import type {
  Choice,
  ElicitField,
  ElicitRequest,
  ElicitResult,
  ElicitSchema,
  ElicitValue,
  SampleContent,
  SampleRequest,
  SampleResult,
} from './contract.ts';
import { messageOf } from './errors.ts';
import { copyJsonValue } from './safe-json.ts';

/** The most tokens a `ctx.sample` answer may have; a larger `maxTokens` is lowered to it. */
export const MAX_SAMPLE_TOKENS = 4096;
/** The most characters of an elicitation's message: a question, not a document. */
const MAX_MESSAGE_CHARS = 4096;
/** The most fields in one form. */
const MAX_FIELDS = 32;

const FORMATS = new Set(['email', 'uri', 'date', 'date-time']);
const TEXT_KEYS = ['title', 'description'];
/** The keywords each kind of field may have (MCP's restricted schema): anything else is refused, not ignored. */
const ALLOWED: Record<FieldKind, readonly string[]> = {
  boolean: ['type', ...TEXT_KEYS, 'default'],
  string: ['type', ...TEXT_KEYS, 'default', 'minLength', 'maxLength', 'format'],
  number: ['type', ...TEXT_KEYS, 'default', 'minimum', 'maximum'],
  enum: ['type', ...TEXT_KEYS, 'default', 'enum', 'enumNames'],
  oneOf: ['type', ...TEXT_KEYS, 'default', 'oneOf'],
  multi: ['type', ...TEXT_KEYS, 'default', 'items', 'minItems', 'maxItems'],
};

type FieldKind = 'boolean' | 'string' | 'number' | 'enum' | 'oneOf' | 'multi';

/** `ctx.elicit`'s request, copied and checked; throws an Error that says what is wrong. */
export function readElicitRequest(value: unknown): ElicitRequest {
  const request = copied(value, 'ctx.elicit');
  if (!isRecord(request)) throw new Error('ctx.elicit takes { message, requestedSchema }');
  const { message, requestedSchema } = request;
  if (typeof message !== 'string' || !message.trim()) throw new Error('ctx.elicit: message must be a non-empty string');
  if (message.length > MAX_MESSAGE_CHARS)
    throw new Error(`ctx.elicit: message has ${message.length} characters; at most ${MAX_MESSAGE_CHARS}`);
  const problem = schemaProblem(requestedSchema);
  if (problem) throw new Error(`ctx.elicit: requestedSchema ${problem}`);
  return { message, requestedSchema: requestedSchema as unknown as ElicitSchema };
}

/** Why `schema` is not a form MCP allows (a flat object of primitive fields), or undefined. */
function schemaProblem(schema: unknown): string | undefined {
  if (!isRecord(schema) || schema.type !== 'object') return 'must be { type: "object", properties: { … } }';
  for (const key of Object.keys(schema)) {
    if (!['type', 'properties', 'required', '$schema'].includes(key)) return `may not have "${key}"`;
  }
  const { properties, required } = schema;
  if (!isRecord(properties)) return 'must have properties: an object of fields';
  const names = Object.keys(properties);
  if (names.length > MAX_FIELDS) return `has ${names.length} fields; at most ${MAX_FIELDS}`;
  for (const name of names) {
    const why = fieldProblem(properties[name]);
    if (why) return `field "${name}" ${why}`;
  }
  if (required !== undefined) {
    if (!Array.isArray(required)) return 'required must be an array of field names';
    for (const name of required) {
      if (typeof name !== 'string' || !Object.hasOwn(properties, name))
        return `required names "${String(name)}", which is not one of its fields`;
    }
  }
  return undefined;
}

function fieldProblem(field: unknown): string | undefined {
  if (!isRecord(field)) return 'must be an object';
  const kind = kindOf(field);
  if (!kind)
    return 'must be a string, number, integer, boolean, single-select (enum or oneOf) or multi-select (array) field; forms do not nest';
  for (const key of Object.keys(field)) {
    if (!ALLOWED[kind].includes(key))
      return `may not have "${key}" (a ${kind} field takes ${ALLOWED[kind].join(', ')})`;
  }
  for (const key of TEXT_KEYS)
    if (field[key] !== undefined && typeof field[key] !== 'string') return `${key} must be a string`;
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems']) {
    const n = field[key];
    if (n !== undefined && !(Number.isInteger(n) && (n as number) >= 0)) return `${key} must be a whole number`;
  }
  for (const key of ['minimum', 'maximum']) {
    if (field[key] !== undefined && !Number.isFinite(field[key])) return `${key} must be a number`;
  }
  if (kind === 'string' && field.format !== undefined && !FORMATS.has(field.format as string))
    return `format must be one of ${[...FORMATS].join(', ')}`;
  const choices = choicesOf(field, kind);
  if (choices !== undefined) {
    if (!choices.length) return 'must offer at least one choice';
    if (new Set(choices).size !== choices.length) return 'offers the same choice twice';
  }
  if (kind === 'enum' && field.enumNames !== undefined) {
    const names = field.enumNames;
    if (!Array.isArray(names) || names.length !== choices!.length || names.some((n) => typeof n !== 'string'))
      return 'enumNames must be one string per enum value';
  }
  if (field.default !== undefined) {
    const why = valueProblem(field as unknown as ElicitField, kind, field.default);
    if (why) return `has a default that ${why}`;
  }
  return undefined;
}

/** Which of MCP's field kinds `field` is, or undefined when it is none of them. */
function kindOf(field: Record<string, unknown>): FieldKind | undefined {
  switch (field.type) {
    case 'boolean':
      return 'boolean';
    case 'number':
    case 'integer':
      return 'number';
    case 'string':
      if (field.enum !== undefined) return isStrings(field.enum) ? 'enum' : undefined;
      if (field.oneOf !== undefined) return isChoices(field.oneOf) ? 'oneOf' : undefined;
      return 'string';
    case 'array': {
      const items = field.items;
      if (!isRecord(items)) return undefined;
      const keys = Object.keys(items).sort().join();
      if (keys === 'enum,type' && items.type === 'string' && isStrings(items.enum)) return 'multi';
      if (keys === 'anyOf' && isChoices(items.anyOf)) return 'multi';
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The values a choice field allows; undefined for a free field. */
function choicesOf(field: Record<string, unknown>, kind: FieldKind): string[] | undefined {
  if (kind === 'enum') return field.enum as string[];
  if (kind === 'oneOf') return (field.oneOf as Choice[]).map((c) => c.const);
  if (kind === 'multi') {
    const items = field.items as { enum?: string[]; anyOf?: Choice[] };
    return items.enum ?? items.anyOf!.map((c) => c.const);
  }
  return undefined;
}

/**
 * The user's answer, checked: an action MCP knows, and with `accept` a value for each required
 * field and only the form's fields, each of its field's type, format, range and choices. `asked`
 * names the question in the errors.
 */
export function readElicitResult(value: unknown, schema: ElicitSchema, asked = 'ctx.elicit'): ElicitResult {
  const answer = copied(value, `the answer to ${asked}`);
  if (!isRecord(answer)) throw new Error(`the answer to ${asked} is not an object`);
  const { action } = answer;
  if (action === 'decline' || action === 'cancel') return { action };
  if (action !== 'accept')
    throw new Error(`the answer to ${asked} has action ${JSON.stringify(action)}; one of accept, decline, cancel`);
  const content = answer.content ?? {};
  if (!isRecord(content)) throw new Error(`the accepted answer to ${asked} has content that is not an object`);
  for (const name of schema.required ?? []) {
    if (content[name] === undefined)
      throw new Error(`the accepted answer to ${asked} has no value for required field "${name}"`);
  }
  for (const [name, given] of Object.entries(content)) {
    const field = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (!field) throw new Error(`the accepted answer to ${asked} has "${name}", which is not a field of the form`);
    const why = fieldValueProblem(field, given);
    if (why) throw new Error(`the accepted answer to ${asked} has a value for "${name}" that ${why}`);
  }
  return { action, content: content as Record<string, ElicitValue> };
}

/** Why `value` does not fit a field of a checked form (`readElicitRequest`), or undefined. */
export function fieldValueProblem(field: ElicitField, value: unknown): string | undefined {
  return valueProblem(field, kindOf(field as unknown as Record<string, unknown>)!, value);
}

/** The choices of a checked form's field, with what the user reads for each; undefined for a free field. */
export function fieldChoices(field: ElicitField): Choice[] | undefined {
  const f = field as unknown as Record<string, unknown>;
  const kind = kindOf(f)!;
  if (kind === 'oneOf') return f.oneOf as Choice[];
  if (kind === 'multi') {
    const items = f.items as { enum?: string[]; anyOf?: Choice[] };
    return items.anyOf ?? items.enum!.map((value) => ({ const: value, title: value }));
  }
  if (kind !== 'enum') return undefined;
  const names = f.enumNames as string[] | undefined;
  return (f.enum as string[]).map((value, i) => ({ const: value, title: names?.[i] ?? value }));
}

/** Why `value` does not fit `field`, or undefined. */
function valueProblem(field: ElicitField, kind: FieldKind, value: unknown): string | undefined {
  const f = field as unknown as Record<string, unknown>;
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'is not true or false';
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'is not a number';
      if (f.type === 'integer' && !Number.isInteger(value)) return 'is not an integer';
      if (typeof f.minimum === 'number' && value < f.minimum) return `is below the minimum ${f.minimum}`;
      if (typeof f.maximum === 'number' && value > f.maximum) return `is above the maximum ${f.maximum}`;
      return undefined;
    case 'string': {
      if (typeof value !== 'string') return 'is not a string';
      const length = [...value].length;
      if (typeof f.minLength === 'number' && length < f.minLength) return `is shorter than ${f.minLength} characters`;
      if (typeof f.maxLength === 'number' && length > f.maxLength) return `is longer than ${f.maxLength} characters`;
      if (typeof f.format === 'string' && !FORMAT_CHECKS[f.format]!(value)) return `is not a valid ${f.format}`;
      return undefined;
    }
    case 'enum':
    case 'oneOf': {
      const choices = choicesOf(f, kind)!;
      return typeof value === 'string' && choices.includes(value) ? undefined : `is not one of ${choices.join(', ')}`;
    }
    case 'multi': {
      const choices = choicesOf(f, kind)!;
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && choices.includes(v)))
        return `is not a list of choices among ${choices.join(', ')}`;
      if (new Set(value).size !== value.length) return 'names a choice twice';
      if (typeof f.minItems === 'number' && value.length < f.minItems) return `has fewer than ${f.minItems} choices`;
      if (typeof f.maxItems === 'number' && value.length > f.maxItems) return `has more than ${f.maxItems} choices`;
      return undefined;
    }
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** JSON Schema's formats, as strictly as a form needs: what a user typed, not every corner of the RFCs. */
const FORMAT_CHECKS: Record<string, (value: string) => boolean> = {
  email: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v),
  uri: (v) => /^[a-zA-Z][a-zA-Z0-9+.-]*:\S*$/.test(v) && URL.canParse(v),
  date: (v) => {
    const m = DATE.exec(v);
    if (!m) return false;
    const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    return day.getUTCMonth() === Number(m[2]) - 1 && day.getUTCDate() === Number(m[3]);
  },
  'date-time': (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)),
};

/** `ctx.sample`'s request, copied and checked, with `maxTokens` capped. */
export function readSampleRequest(value: unknown): SampleRequest {
  const request = copied(value, 'ctx.sample');
  if (!isRecord(request)) throw new Error('ctx.sample takes { messages, systemPrompt?, maxTokens }');
  const { messages, systemPrompt, maxTokens } = request;
  if (!Array.isArray(messages) || !messages.length)
    throw new Error('ctx.sample: messages must be a non-empty array of { role, content }');
  messages.forEach((message, i) => {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant'))
      throw new Error(`ctx.sample: messages[${i}] must be { role: "user" | "assistant", content }`);
    const why = contentProblem(message.content);
    if (why) throw new Error(`ctx.sample: messages[${i}].content ${why}`);
  });
  if (systemPrompt !== undefined && typeof systemPrompt !== 'string')
    throw new Error('ctx.sample: systemPrompt must be a string');
  if (!(Number.isInteger(maxTokens) && (maxTokens as number) >= 1))
    throw new Error('ctx.sample: maxTokens must be a whole number of at least 1');
  return {
    messages: messages as SampleRequest['messages'],
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    maxTokens: Math.min(maxTokens as number, MAX_SAMPLE_TOKENS),
  };
}

/** The model's answer, checked to be MCP's shape before the tool reads it. */
export function readSampleResult(value: unknown): SampleResult {
  const answer = copied(value, 'the answer to ctx.sample');
  if (!isRecord(answer) || answer.role !== 'assistant' || typeof answer.model !== 'string')
    throw new Error('the answer to ctx.sample is not { role: "assistant", content, model }');
  const why = contentProblem(answer.content);
  if (why) throw new Error(`the answer to ctx.sample has content that ${why}`);
  const { stopReason } = answer;
  return {
    role: 'assistant',
    content: answer.content as SampleContent,
    model: answer.model,
    ...(typeof stopReason === 'string' ? { stopReason } : {}),
  };
}

function contentProblem(content: unknown): string | undefined {
  if (!isRecord(content)) return 'must be { type: "text", text } or { type: "image", data, mimeType }';
  if (content.type === 'text') return typeof content.text === 'string' ? undefined : 'has no text';
  if (content.type === 'image')
    return typeof content.data === 'string' && typeof content.mimeType === 'string'
      ? undefined
      : 'must have base64 data and a mimeType';
  return `has type ${JSON.stringify(content.type)}; text or image`;
}

/** A plain copy of what a plugin or a client gave: getters read once, nothing shared with them. */
function copied(value: unknown, what: string): unknown {
  try {
    return copyJsonValue(value);
  } catch (error) {
    throw new Error(`${what} is not plain JSON data: ${messageOf(error)}`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function isChoices(value: unknown): value is Choice[] {
  return (
    Array.isArray(value) &&
    value.every(
      (c) => isRecord(c) && typeof c.const === 'string' && typeof c.title === 'string' && Object.keys(c).length === 2,
    )
  );
}
