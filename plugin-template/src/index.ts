/**
 * The plugin: its name, version and options, and `setup`, which builds the tools from the options
 * once the host has validated them (defaults applied) against the `options` schema below.
 */
import { readFileSync } from 'node:fs';
import Type from 'typebox';
import { definePlugin } from 'rousseau-host';
import { apiGet } from './api-get.ts';
import { countWords } from './count-words.ts';

// Name and version come from package.json, so the plugin the host reports is always the package
// that was installed: `rousseau-plugin-weather` → `weather`, `@acme/rousseau-plugin` → `acme`.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
  description?: string;
};
const name = pkg.name.replace(/^@([^/]+)\/rousseau-plugin$/, '$1').replace(/^(?:@[^/]+\/)?rousseau-plugin-/, '');

const Options = Type.Object(
  {
    baseUrl: Type.Optional(
      Type.String({
        description:
          'Base URL of the API that api_get reads, e.g. "https://api.example.com/v1". Without it, api_get is not offered.',
        pattern: '^https?://',
      }),
    ),
    token: Type.Optional(Type.String({ description: 'Bearer token api_get sends with every request.', minLength: 1 })),
    // Required with a default: the host fills it in before validating, so a config may leave it
    // out, and the type says it is always there.
    maxBytes: Type.Integer({
      description: 'Most bytes of a response body api_get returns to the model.',
      minimum: 256,
      maximum: 1_048_576,
      default: 16_384,
    }),
  },
  { additionalProperties: false },
);

// The tools here get the options through `setup`. A tool can instead read them from its context,
// typed from this schema, when it is made with `defineToolFor` (with `defineTool` alone,
// `ctx.options` is `Record<string, unknown>`):
//   const tool = defineToolFor(Options);
//   const limits = tool({ name, description, inputSchema, execute: (input, ctx) => `${ctx.options.maxBytes} bytes` });
export default definePlugin({
  name,
  version: pkg.version,
  ...(pkg.description ? { description: pkg.description } : {}),
  options: Options,
  setup({ options, log }) {
    if (!options.baseUrl) {
      log.debug('api_get is off: set options.baseUrl to offer it');
      return [countWords];
    }
    // What the schema cannot say: the URL must parse. Throwing here fails this plugin's load with
    // the message below, and leaves every other plugin running.
    if (!URL.canParse(options.baseUrl)) throw new Error(`options.baseUrl is not a valid URL: ${options.baseUrl}`);
    return [
      countWords,
      apiGet({
        baseUrl: options.baseUrl,
        maxBytes: options.maxBytes,
        ...(options.token ? { token: options.token } : {}),
      }),
    ];
  },
});
