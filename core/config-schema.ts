/**
 * The config file's schema (README.md, "Config reference"). Unknown keys are errors, so a typo never passes silently.
 * `HostConfig` is derived from the schema: the type and the check cannot drift apart.
 */
import Type, { type Static } from 'typebox';
import { MAX_TIMEOUT_MS } from './deadlines.ts';
import { LOG_LEVELS } from './log.ts';

const Isolation = Type.Enum(['inline', 'worker', 'process'], {
  description:
    "Where the plugin runs: 'worker' (own thread, the default for non-built-ins), 'inline' (the host's thread) or 'process' (own child process).",
});

const Decision = Type.Enum(['allow', 'ask', 'deny']);

const Rule = Type.Object(
  {
    tool: Type.String({ minLength: 1, description: 'Exact tool name, or a glob such as `fs_*`.' }),
    match: Type.Optional(
      Type.String({ description: 'Regex tested against the canonical JSON of the validated input.' }),
    ),
    where: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Per-field anchored regexes; a key is a top-level field, or a JSON pointer ("/headers/host") into the input.',
      }),
    ),
    reason: Type.Optional(Type.String({ description: 'Shown to the model and in the audit log.' })),
    callers: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'Only calls from one of these callers (a token name or a JWT subject) match.',
      }),
    ),
    scopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'Only calls from a caller holding at least one of these scopes match.',
      }),
    ),
  },
  { additionalProperties: false },
);

const McpServer = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    cwd: Type.Optional(Type.String()),
    url: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

/** Per-plugin settings, shared by module, MCP and built-in entries. */
const PluginSettings = {
  options: Type.Optional(Type.Unknown({ description: "Validated against the plugin's own `options` schema." })),
  timeoutMs: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS, description: 'Per-call timeout (tools may set their own).' }),
  ),
  loadTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
  maxOutputBytes: Type.Optional(Type.Integer({ minimum: 256 })),
  isolation: Type.Optional(Isolation),
  maxConcurrency: Type.Optional(Type.Integer({ minimum: 1 })),
  maxQueue: Type.Optional(Type.Integer({ minimum: 0 })),
  memoryMb: Type.Optional(Type.Integer({ minimum: 8 })),
  enabled: Type.Optional(Type.Boolean()),
};

const PluginEntry = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object(
    {
      module: Type.Optional(
        Type.String({ minLength: 1, description: 'Path (relative to the config file) or package name.' }),
      ),
      mcp: Type.Optional(McpServer),
      name: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9-]{0,63}$' })),
      ...PluginSettings,
    },
    { additionalProperties: false },
  ),
]);

const Price = Type.Number({ minimum: 0, maximum: 1_000_000, description: 'US dollars per million tokens.' });
const Pricing = Type.Object(
  {
    input: Price,
    output: Price,
    cacheRead: Type.Optional(Price),
    cacheWrite: Type.Optional(Price),
  },
  {
    additionalProperties: false,
    description: 'A model price, per million tokens; a missing cache price is the input price.',
  },
);

const BuiltinName = Type.Enum(['fs', 'shell', 'http']);
const BuiltinEntry = Type.Union([
  BuiltinName,
  Type.Object({ name: BuiltinName, ...PluginSettings }, { additionalProperties: false }),
]);

const ServeToken = Type.Object(
  {
    name: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$',
      description: 'The caller this token proves: in the audit trail, policy rules and limits.',
    }),
    token: Type.Optional(
      Type.String({ minLength: 16, description: 'The token itself (prefer tokenEnv: a config file is often shared).' }),
    ),
    tokenEnv: Type.Optional(
      Type.String({ minLength: 1, description: 'The environment variable that holds the token.' }),
    ),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "The caller's scopes." })),
  },
  { additionalProperties: false },
);

const Serve = Type.Object(
  {
    host: Type.Optional(
      Type.String({ minLength: 1, description: 'The address to listen on (default 127.0.0.1); `--host` overrides.' }),
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65535, description: 'The port (default 7331); `--port` overrides.' }),
    ),
    publicUrl: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description:
          'The URL clients reach the MCP endpoint at, when a proxy stands in front (the OAuth metadata names it; a loopback server also answers its Host name). Default: built from the request.',
      }),
    ),
    stateless: Type.Optional(Type.Boolean({ description: 'No sessions: a fresh server per request (docs/mcp.md).' })),
    shutdownTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_TIMEOUT_MS,
        description: 'How long calls in flight may finish after SIGTERM before they are cancelled (default 10000).',
      }),
    ),
    auth: Type.Optional(
      Type.Object(
        {
          tokens: Type.Optional(Type.Array(ServeToken)),
          oauth: Type.Optional(
            Type.Object(
              {
                issuer: Type.String({ pattern: '^https?://', description: "The authorization server's issuer URL." }),
                audience: Type.String({
                  minLength: 1,
                  description: "The `aud` a token must carry: this server's resource indicator.",
                }),
                jwksUri: Type.Optional(
                  Type.String({
                    pattern: '^https?://',
                    description: "The issuer's key set; default: discovered from its metadata.",
                  }),
                ),
              },
              { additionalProperties: false },
            ),
          ),
          requiredScopes: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description: 'Scopes every caller must hold to use the server (403 insufficient_scope otherwise).',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    metrics: Type.Optional(
      Type.Object(
        {
          callers: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description: 'Callers (token names, JWT subjects) that may read /metrics.',
            }),
          ),
          scopes: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description: 'A caller holding any one of these scopes may read /metrics.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            'Who may read /metrics when the server authenticates callers (without this, no one: 403). Metrics name every tool and caller.',
        },
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          callsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Per caller.' })),
          inFlight: Type.Optional(Type.Integer({ minimum: 1, description: 'Calls in flight per caller.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const HostConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    plugins: Type.Optional(Type.Array(PluginEntry)),
    builtins: Type.Optional(Type.Union([Type.Array(BuiltinEntry), Type.Literal(false)])),
    workspace: Type.Optional(Type.String({ description: 'Workspace root, relative to the config file.' })),
    policy: Type.Optional(
      Type.Object(
        {
          default: Type.Optional(Decision),
          readOnlyDefault: Type.Optional(Decision),
          allow: Type.Optional(Type.Array(Rule)),
          ask: Type.Optional(Type.Array(Rule)),
          deny: Type.Optional(Type.Array(Rule)),
          builtinRules: Type.Optional(Type.Boolean({ description: 'Ship the default deny rules (default true).' })),
        },
        { additionalProperties: false },
      ),
    ),
    provider: Type.Optional(
      Type.Object(
        {
          name: Type.Enum(['anthropic', 'openai', 'openai-responses', 'replay']),
          model: Type.Optional(Type.String()),
          baseUrl: Type.Optional(Type.String()),
          maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
          maxTokensField: Type.Optional(
            Type.Enum(['max_completion_tokens', 'max_tokens'], {
              description:
                'openai: the request field that carries maxTokens. Default: max_completion_tokens on api.openai.com, max_tokens on any other base URL (servers that only take the older field).',
            }),
          ),
          stream: Type.Optional(
            Type.Boolean({
              description: 'openai-responses: false asks for each answer whole, not streamed (default true).',
            }),
          ),
          pricing: Type.Optional(Pricing),
          file: Type.Optional(Type.String({ description: 'replay: the JSON file of assistant turns.' })),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
          retries: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
    pricing: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Pricing, {
        description: 'Model prices by model id, over the built-in table (docs/agent.md).',
      }),
    ),
    agent: Type.Optional(
      Type.Object(
        {
          maxTurns: Type.Optional(Type.Integer({ minimum: 1 })),
          system: Type.Optional(Type.String()),
          maxRepeatedFailures: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    isolation: Type.Optional(
      Type.Object(
        {
          quarantine: Type.Optional(
            Type.Object(
              {
                failures: Type.Optional(Type.Integer({ minimum: 1 })),
                windowMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
                cooldownMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    serve: Type.Optional(Serve),
    limits: Type.Optional(
      Type.Object(
        {
          maxInputChars: Type.Optional(
            Type.Integer({
              minimum: 1024,
              description:
                'The most characters of JSON text a call input given as text may have (host.call with a string, the CLI call): refused before it is parsed. Default 10 MiB (10485760); MCP stdio lines stay within 10 MiB.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    log: Type.Optional(
      Type.Object(
        {
          level: Type.Optional(Type.Enum([...LOG_LEVELS])),
          audit: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Literal(false)])),
          auditInputCap: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type HostConfig = Static<typeof HostConfigSchema>;
export type PluginEntryConfig = Static<typeof PluginEntry>;
export type BuiltinEntryConfig = Static<typeof BuiltinEntry>;
export type PolicyRuleConfig = Static<typeof Rule>;
export type PolicyConfig = NonNullable<HostConfig['policy']>;
export type ServeConfig = Static<typeof Serve>;
export type ServeAuthConfig = NonNullable<ServeConfig['auth']>;
export type CallerLimitsConfig = NonNullable<ServeConfig['limits']>;
export type MetricsGrant = NonNullable<ServeConfig['metrics']>;
