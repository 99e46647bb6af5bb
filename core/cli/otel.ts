/**
 * The CLI's tracing: when the standard OpenTelemetry environment asks for traces and nothing has
 * registered an SDK yet (`node --import …`), the OpenTelemetry SDK for Node is started here, from
 * the project's own `node_modules` or the host's. The SDK is not a dependency of the host: without
 * it, a warning says how to add it. docs/serve.md, "Metrics and tracing".
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { messageOf } from '../errors.ts';

export const OTEL_SDK_PACKAGE = '@opentelemetry/sdk-node';

/** How long the end of a command waits for the last spans to be exported. */
const SHUTDOWN_MS = 5000;

type Env = Readonly<Record<string, string | undefined>>;

/** Whether the environment asks for traces: an exporter or an OTLP endpoint is named, and the SDK is not disabled. */
export function tracesWanted(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

interface NodeSdk {
  start(): void;
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK when the environment asks for traces and none is registered. Returns what flushes
 * and stops it at the end of the command, or undefined when nothing was started. Never throws:
 * tracing that cannot start is a warning, not a failed command.
 */
export async function startTracingFromEnv(
  cwd: string,
  warn: (message: string) => void,
  env: Env = process.env,
): Promise<(() => Promise<void>) | undefined> {
  if (!tracesWanted(env)) return undefined;
  // Imported here: a command run without OTEL_* does not load the tracing API at start-up.
  const { activeTracer } = await import('../tracing.ts');
  if (activeTracer()) return undefined;
  const file = resolveSdk(cwd);
  if (!file) {
    warn(
      `OTEL_* asks for traces, but ${OTEL_SDK_PACKAGE} is not installed in ${cwd} nor beside rousseau-host: no spans are exported. ` +
        `Install it (npm install ${OTEL_SDK_PACKAGE} @opentelemetry/exporter-trace-otlp-proto), or start node with an --import file that registers an SDK.`,
    );
    return undefined;
  }
  try {
    const loaded = (await import(pathToFileURL(file).href)) as {
      NodeSDK?: new (config: object) => NodeSdk;
      default?: { NodeSDK?: new (config: object) => NodeSdk };
    };
    const NodeSDK = loaded.NodeSDK ?? loaded.default?.NodeSDK;
    if (!NodeSDK) throw new Error(`${file} exports no NodeSDK`);
    // The SDK reads the rest of OTEL_* itself: exporter, endpoint, headers, sampler, resource.
    const sdk = new NodeSDK(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'rousseau-host' });
    sdk.start();
    return () => atMostShutdownMs(sdk.shutdown(), warn);
  } catch (error) {
    warn(`tracing: could not start ${OTEL_SDK_PACKAGE} (${file}): ${messageOf(error)}`);
    return undefined;
  }
}

/**
 * Exports the spans an SDK registered before the CLI ran (`node --import ./otel.mjs`) still holds.
 * The CLI ends with `process.exit`, so `beforeExit` never fires there: a batching span processor
 * would otherwise lose the spans of the command's last seconds.
 */
export async function flushRegisteredTracing(warn: (message: string) => void): Promise<void> {
  const { registeredTracerProvider } = await import('../tracing.ts');
  const provider = registeredTracerProvider() as { forceFlush?: () => Promise<void> } | undefined;
  if (typeof provider?.forceFlush === 'function') await atMostShutdownMs(provider.forceFlush(), warn);
}

/** Waits for the SDK's export, never longer than SHUTDOWN_MS, warning when it fails. */
async function atMostShutdownMs(exported: Promise<void>, warn: (message: string) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SHUTDOWN_MS);
    timer.unref();
  });
  await Promise.race([exported.catch((error: unknown) => warn(`tracing: ${messageOf(error)}`)), late]);
  clearTimeout(timer);
}

/** The SDK's entry file, from the project first, then from wherever the host is installed. */
function resolveSdk(cwd: string): string | undefined {
  for (const from of [join(cwd, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from).resolve(OTEL_SDK_PACKAGE);
    } catch {
      // not installed there
    }
  }
  return undefined;
}
