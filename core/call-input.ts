/**
 * A call's input, from what the caller sent to the one value the validator passed: the text's length
 * capped before it is parsed, strict JSON or a copy of a value, schema defaults, NFC, workspace
 * paths made canonical, then the schema check, refused beforehand when it would cost too much.
 * What the policy, the audit and the tool see is that value.
 */
import { CheckTooCostly } from './check-budget.ts';
import { normalizeValue } from './canonical-json.ts';
import { messageOf } from './errors.ts';
import { jsonTextTooLong } from './json-text.ts';
import type { Failed, Step } from './step.ts';
import type { RegisteredTool } from './registry.ts';
import { copyJsonValue, emptyRecord, MAX_COPIED_VALUES, parseStrictJson } from './safe-json.ts';
import { applyDefaults } from './schema-defaults.ts';
import { tooCostlyToCheck } from './shared-validators.ts';
import { canonicalPaths } from './workspace-paths.ts';

/** Parses (strings) or checks (values) the input, applies schema defaults, normalises, validates. */
export function prepareInput(
  tool: RegisteredTool,
  raw: unknown,
  maxInputChars: number,
  workspace: string | undefined,
): Step<{ input: unknown }> {
  // Before parsing: JSON.parse cannot be stopped once it runs (6.9 MB of small numbers: 0.6 s).
  const tooLong = typeof raw === 'string' ? jsonTextTooLong(raw.length, maxInputChars) : undefined;
  if (tooLong) return inputTooLarge(tool.info.name, `it is ${tooLong} (limits.maxInputChars)`);
  let input: unknown;
  try {
    if (typeof raw === 'string') {
      input = raw.trim() === '' ? emptyRecord() : parseStrictJson(raw);
    } else {
      input = copyJsonValue(raw ?? {});
    }
    if (tool.hasDefaults) input = applyDefaults(tool.info.inputSchema, input); // input is our own copy
    // From here on one value (strings and keys in NFC): what the validator checks is what the
    // policy, the audit and the tool see. Keys that collide once normalised are rejected.
    input = normalizeValue(input);
    // And each path into the workspace the one the tool will act on: the policy reads that one.
    if (workspace !== undefined && tool.pathFields.length > 0) {
      const tooLong = canonicalPaths(input, tool.pathFields, workspace);
      if (tooLong)
        return {
          ok: false,
          code: 'invalid_input',
          content: `Invalid input for tool "${tool.info.name}":\n- ${tooLong}\nGive a shorter path and call again.`,
        };
    }
  } catch (error) {
    return {
      ok: false,
      code: 'invalid_json',
      content: `Invalid JSON input for tool "${tool.info.name}": ${messageOf(error)}. Send one JSON object that matches the tool's input schema.`,
    };
  }
  let problems: string[] | undefined;
  try {
    const validator = tool.validator();
    // Without defaults (which may add values per item), the input holds at most what was sent: a
    // value per character of the text, or what a copy takes.
    const sent = typeof raw === 'string' ? raw.length + 1 : MAX_COPIED_VALUES;
    // And at most three characters per character sent: NFC writes one out as up to three.
    const sentChars = typeof raw === 'string' && !tool.hasDefaults ? 3 * raw.length : Infinity;
    const tooBig = tooCostlyToCheck(validator, input, tool.hasDefaults ? Infinity : sent, sentChars);
    if (tooBig) return inputTooLarge(tool.info.name, tooBig);
    if (!validator.Check(input))
      problems = validator.problems(input, tool.info.inputSchema).map((p) => `- ${p.pointer || '/'}: ${p.message}`);
  } catch (error) {
    if (error instanceof CheckTooCostly) return inputTooLarge(tool.info.name, error.message);
    // The schema passed the load-time check, compile included, and still throws on this input (one
    // that refers to itself without reading any of it overflows the stack): the plugin's fault,
    // told as such; the caller's input is not what to fix.
    return {
      ok: false,
      code: 'tool_error',
      content: `Tool "${tool.info.name}" cannot check its input: its input schema failed (${messageOf(error)}). Do not retry this tool; its plugin must fix the schema.`,
    };
  }
  if (problems) {
    return {
      ok: false,
      code: 'invalid_input',
      content: `Invalid input for tool "${tool.info.name}":\n${problems.join('\n')}\nFix these fields to match the tool's input schema and call again.`,
    };
  }
  return { ok: true, input };
}

/** An input refused before or during its check for what checking it would cost. */
function inputTooLarge(name: string, why: string): Failed {
  return {
    ok: false,
    code: 'invalid_input',
    content: `Input for tool "${name}" is too large to check: ${why}. Send a smaller input, or split it over several calls.`,
  };
}
