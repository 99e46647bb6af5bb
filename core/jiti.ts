/**
 * jiti, for every thread that needs it (the host's, and each worker that imports a TypeScript
 * plugin). Required, not imported: an `import()` of its CommonJS bundle has Node's ES module loader
 * scan the bundle's 190 KB for named exports, which cost each worker ~2.6 MiB of RSS more
 * (docs/isolation.md, "Memory").
 *
 * jiti's bundle requires 14 built-ins as it loads, 68 modules with what they load in turn. Four of
 * them are read only on paths a warm-cache import never takes (an internal error, a debug line's
 * colour and timing), yet each built-in a thread loads is compiled there from Node's code cache,
 * which costs memory for the thread's life (docs/isolation.md, "Memory"). Those four are handed to
 * jiti as stand-ins that load the real module at the first read of anything they do not answer
 * themselves: a worker plugin's thread loads 179 modules instead of 201, and ~0.3 MiB less RSS.
 */
import { createRequire, Module } from 'node:module';

type Load = (request: string, ...rest: unknown[]) => unknown;

/** Per built-in, what its stand-in answers without loading it; any other read loads the real module. */
const STAND_INS: Record<string, Record<string, () => unknown>> = {
  // Read by jiti's error helpers only.
  'node:assert': {},
  'node:v8': {},
  // jiti times each import for its debug line (\`performance.now()\`, read as a difference). Not the
  // global \`performance\`: reading it loads perf_hooks whole (histograms, timerify, the event-loop
  // monitor).
  'node:perf_hooks': { performance: () => clock },
  // jiti asks at load whether stderr takes colours (`tty.WriteStream.prototype.hasColors()`), for
  // JITI_DEBUG's lines; no answer means no colour. The real module brings `net` and its streams.
  'node:tty': { WriteStream: () => undefined },
};

const clock = { now: () => Number(process.hrtime.bigint()) / 1e6 };

let jiti: typeof import('jiti') | undefined;

export function requireJiti(): typeof import('jiti') {
  if (jiti) return jiti;
  const loader = Module as unknown as { _load: Load };
  const load = loader._load;
  // Only while jiti's bundle loads: its requires run at its top level, and nothing else loads meanwhile.
  loader._load = function (this: unknown, request, ...rest) {
    const answers = STAND_INS[request];
    return answers ? standIn(request, answers) : load.call(this, request, ...rest);
  };
  try {
    jiti = createRequire(import.meta.url)('jiti') as typeof import('jiti');
  } finally {
    loader._load = load;
  }
  return jiti;
}

function standIn(id: string, answers: Record<string, () => unknown>): object {
  let real: object | undefined;
  return new Proxy(Object.create(null) as object, {
    get(_, key) {
      const answer = typeof key === 'string' && Object.hasOwn(answers, key) ? answers[key] : undefined;
      if (answer) return answer();
      real ??= process.getBuiltinModule(id) as object;
      return Reflect.get(real, key);
    },
  });
}
