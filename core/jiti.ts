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
 * themselves: a worker plugin's thread loads 179 modules instead of 201, and ~0.25 MiB less RSS.
 * A fifth, `node:crypto` (17 modules), jiti reads on every import, for one MD5 that names its cache
 * file and stamps the source it was made from: its stand-in computes that MD5 itself for a
 * source up to 8 KB (`md5Hex`, tested against `node:crypto`), and hands a longer one to crypto: 162
 * modules, ~0.25 MiB less again.
 */
import { createRequire, Module } from 'node:module';

type Load = (request: string, ...rest: unknown[]) => unknown;

/** Per built-in, what its stand-in answers without loading it; any other read loads the real module. */
const STAND_INS: Record<string, Record<string, () => unknown>> = {
  // Read by jiti's error helpers only.
  'node:assert': {},
  'node:v8': {},
  // jiti times each import for its debug line (`performance.now()`, read as a difference). Not the
  // global `performance`: reading it loads perf_hooks whole (histograms, timerify, the event-loop
  // monitor).
  'node:perf_hooks': { performance: () => clock },
  // jiti asks at load whether stderr takes colours (`tty.WriteStream.prototype.hasColors()`), for
  // JITI_DEBUG's lines; no answer means no colour. The real module brings `net` and its streams.
  'node:tty': { WriteStream: () => undefined },
  // `utils_hash`: `createHash(getFips() ? 'sha256' : 'md5').update(text).digest('hex')`. Always MD5
  // here, where `node:crypto` would refuse it under FIPS: the hash names a cache file, it guards
  // nothing. `__esModule` is read by the bundle's interop before any of it.
  'node:crypto': {
    __esModule: () => undefined,
    getFips: () => () => 0,
    createHash: () => (algorithm: string) =>
      algorithm === 'md5' ? new StandInMd5() : realCrypto().createHash(algorithm),
  },
};

const clock = { now: () => Number(process.hrtime.bigint()) / 1e6 };

let cryptoLoaded = false;
const realCrypto = () => {
  cryptoLoaded = true;
  return process.getBuiltinModule('node:crypto') as typeof import('node:crypto');
};

/** jiti's use of an MD5 hash (strings in, hex out) without `node:crypto`; any other use is handed to it. */
class StandInMd5 {
  private text = '';
  private real?: import('node:crypto').Hash;

  update(data: unknown, encoding?: import('node:crypto').Encoding): this {
    if (typeof data === 'string' && !encoding && !this.real) this.text += data;
    else {
      this.real ??= realCrypto().createHash('md5').update(this.text);
      this.real.update(data as string, encoding as import('node:crypto').Encoding);
    }
    return this;
  }

  digest(encoding?: import('node:crypto').BinaryToTextEncoding): string | Buffer {
    if (encoding === 'hex' && !this.real && this.text.length <= MD5_IN_JS_MAX && !cryptoLoaded)
      return md5Hex(this.text);
    this.real ??= realCrypto().createHash('md5').update(this.text);
    return encoding ? this.real.digest(encoding) : this.real.digest();
  }
}

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

/**
 * Per step of MD5 (RFC 1321): the sine-derived constant, the message word it reads, and the left
 * rotation. Tables, and a loop that allocates nothing, because this runs in a fresh thread before V8
 * has optimised anything: with an array swap per step, a 50 KB source took ~90 ms there.
 */
const SINES = Int32Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0);
const WORDS = Uint8Array.from({ length: 64 }, (_, i) =>
  i < 16 ? i : i < 32 ? (5 * i + 1) & 15 : i < 48 ? (3 * i + 5) & 15 : (7 * i) & 15,
);
const SHIFTS = Uint8Array.from(
  { length: 64 },
  (_, i) => [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21][((i >> 4) << 2) | (i & 3)]!,
);

/**
 * The most UTF-16 units `md5Hex` takes on: cold, it costs about as much as loading `node:crypto` at
 * ~10 KB (a fresh worker, measured), so a longer source (or any, once crypto is loaded) goes to crypto.
 */
const MD5_IN_JS_MAX = 8 * 1024;

/** The MD5 of `text`'s UTF-8 bytes, in hex, as `createHash('md5').update(text).digest('hex')` gives it. */
export function md5Hex(text: string): string {
  const length = Buffer.byteLength(text, 'utf8');
  // The message, a 1 bit, zeros, and its length in bits: whole 64-byte blocks of little-endian words.
  const blocks = ((length + 8) >>> 6) + 1;
  const message = Buffer.alloc(blocks * 64);
  message.write(text, 'utf8');
  message[length] = 0x80;
  message.writeUInt32LE((length * 8) >>> 0, blocks * 64 - 8);
  message.writeUInt32LE(Math.floor(length / 2 ** 29), blocks * 64 - 4);
  const view = new DataView(message.buffer, message.byteOffset, message.length);
  let a = 0x67452301;
  let b = 0xefcdab89 | 0;
  let c = 0x98badcfe | 0;
  let d = 0x10325476;
  for (let offset = 0; offset < message.length; offset += 64) {
    const a0 = a;
    const b0 = b;
    const c0 = c;
    const d0 = d;
    for (let i = 0; i < 64; i++) {
      const f = i < 16 ? (b & c) | (~b & d) : i < 32 ? (d & b) | (~d & c) : i < 48 ? b ^ c ^ d : c ^ (b | ~d);
      const x = (a + f + SINES[i]! + view.getInt32(offset + WORDS[i]! * 4, true)) | 0;
      const shift = SHIFTS[i]!;
      a = d;
      d = c;
      c = b;
      b = (b + ((x << shift) | (x >>> (32 - shift)))) | 0;
    }
    a = (a + a0) | 0;
    b = (b + b0) | 0;
    c = (c + c0) | 0;
    d = (d + d0) | 0;
  }
  const digest = Buffer.alloc(16);
  digest.writeInt32LE(a, 0);
  digest.writeInt32LE(b, 4);
  digest.writeInt32LE(c, 8);
  digest.writeInt32LE(d, 12);
  return digest.toString('hex');
}
