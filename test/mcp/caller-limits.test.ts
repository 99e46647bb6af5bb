// Limits per caller on their own, on a clock the test moves: the token bucket, calls in flight,
// batches, and the bound on the callers kept.
import { expect } from 'chai';
import { type Admission, CallerLimits } from '../../core/mcp/caller-limits.ts';

/** A clock that moves only when told to. */
function clock() {
  let ms = 1_000;
  return {
    now: () => ms,
    advance: (by: number) => {
      ms += by;
    },
  };
}

function admitted(admission: Admission) {
  if (!admission.ok) throw new Error(`expected an admission: ${admission.message}`);
  return admission;
}

function refusal(admission: Admission) {
  if (admission.ok) throw new Error('expected a refusal');
  return admission;
}

describe('caller limits', () => {
  it('callsPerSecond: a burst of that many, then refills continuously, and says when to retry', () => {
    const time = clock();
    const limits = new CallerLimits({ callsPerSecond: 4 }, { now: time.now });
    for (let i = 0; i < 4; i++) expect(limits.admit('alice', 1).ok, `call ${i}`).to.equal(true);
    const over = refusal(limits.admit('alice', 1));
    expect(over).to.include({ limit: 'callsPerSecond', retryAfterSeconds: 1 });
    expect(over.message).to.include('caller "alice"').and.include('4 calls per second').and.include('retry after 1 s');
    // A quarter of a second is one call at 4 per second; not two.
    time.advance(250);
    expect(limits.admit('alice', 1).ok).to.equal(true);
    expect(limits.admit('alice', 1).ok).to.equal(false);
    // Refills stop at the burst, however long the caller was away.
    time.advance(60_000);
    for (let i = 0; i < 4; i++) expect(limits.admit('alice', 1).ok).to.equal(true);
    expect(limits.admit('alice', 1).ok).to.equal(false);
  });

  it('keeps each caller to its own bucket', () => {
    const time = clock();
    const limits = new CallerLimits({ callsPerSecond: 1 }, { now: time.now });
    expect(limits.admit('alice', 1).ok).to.equal(true);
    expect(limits.admit('alice', 1).ok).to.equal(false);
    expect(limits.admit('bob', 1).ok).to.equal(true);
    expect(refusal(limits.admit('anonymous', 2)).message).to.include('callers without a name');
  });

  it('a slow rate waits whole seconds: Retry-After is an integer of at least 1', () => {
    const time = clock();
    const limits = new CallerLimits({ callsPerSecond: 0.25 }, { now: time.now });
    expect(limits.admit('a', 1).ok, 'a rate under 1 still allows one call').to.equal(true);
    expect(refusal(limits.admit('a', 1)).retryAfterSeconds).to.equal(4);
    time.advance(3_500);
    expect(refusal(limits.admit('a', 1)).retryAfterSeconds).to.equal(1);
    time.advance(500);
    expect(limits.admit('a', 1).ok).to.equal(true);
  });

  it('batches take one token per call, and a batch bigger than the burst is refused outright', () => {
    const time = clock();
    const limits = new CallerLimits({ callsPerSecond: 5 }, { now: time.now });
    expect(limits.admit('a', 3).ok).to.equal(true);
    expect(refusal(limits.admit('a', 3))).to.include({ limit: 'callsPerSecond', retryAfterSeconds: 1 });
    expect(limits.admit('a', 2).ok).to.equal(true);
    time.advance(60_000);
    expect(refusal(limits.admit('a', 6)).message).to.include('A batch of 6 tool calls');
    expect(limits.admit('a', 5).ok, 'the refused batch took nothing').to.equal(true);
  });

  it('inFlight: places are held until given back, once, and a refused call takes no token', () => {
    const time = clock();
    const limits = new CallerLimits({ inFlight: 2, callsPerSecond: 3 }, { now: time.now });
    const first = admitted(limits.admit('a', 1));
    const second = admitted(limits.admit('a', 1));
    const over = refusal(limits.admit('a', 1));
    expect(over).to.include({ limit: 'inFlight', retryAfterSeconds: 1 });
    expect(over.message).to.include('2 running at once').and.include('serve.limits.inFlight');
    first.close();
    first.close(); // a second close gives nothing back
    expect(limits.admit('a', 1).ok, 'the refused call left the third token').to.equal(true);
    second.close();
    expect(refusal(limits.admit('a', 1)).limit, 'a place is free, but three tokens are spent').to.equal(
      'callsPerSecond',
    );
  });

  it('a call that entered its handler keeps its place past the end of its request, until it leaves', () => {
    const limits = new CallerLimits({ inFlight: 2 });
    const batch = admitted(limits.admit('a', 2));
    const place = batch.places.enter();
    batch.close(); // the request is over: the call that never entered gives its place back
    const other = admitted(limits.admit('a', 1));
    expect(refusal(limits.admit('a', 1)).limit).to.equal('inFlight');
    place.leave();
    place.leave();
    expect(admitted(limits.admit('a', 1)), 'one place, given back once').to.be.an('object');
    expect(refusal(limits.admit('a', 1)).limit).to.equal('inFlight');
    other.close();
  });

  it('a cancelled call whose tool runs on keeps its place until the tool has stopped', () => {
    const limits = new CallerLimits({ inFlight: 1 });
    const request = admitted(limits.admit('a', 1));
    const place = request.places.enter();
    const stopped = place.onRun();
    place.leave(); // cancelled: answered, and its request closed, while the tool runs on
    request.close();
    expect(refusal(limits.admit('a', 1)).message).to.include('1 running now');
    stopped();
    stopped(); // told twice: gives back once
    const next = admitted(limits.admit('a', 1));
    expect(refusal(limits.admit('a', 1)).limit).to.equal('inFlight');
    next.close();
  });

  it('a tool that stops before its call is answered holds the place until the answer', () => {
    const limits = new CallerLimits({ inFlight: 1 });
    const request = admitted(limits.admit('a', 1));
    const place = request.places.enter();
    place.onRun()();
    expect(limits.admit('a', 1).ok, 'still being answered').to.equal(false);
    place.leave();
    expect(limits.admit('a', 1).ok).to.equal(true);
  });

  it('keeps at most maxCallers, forgetting the idle caller unused longest, never one with calls in flight', () => {
    const time = clock();
    const limits = new CallerLimits({ callsPerSecond: 1, inFlight: 1 }, { now: time.now, maxCallers: 2 });
    expect(limits.admit('busy', 1).ok).to.equal(true); // held: never given back
    admitted(limits.admit('idle', 1)).close();
    expect(limits.admit('idle', 1).ok, 'its one token is spent').to.equal(false);
    // A third caller: `busy` is the oldest but has a call in flight, so `idle` is forgotten.
    expect(limits.admit('third', 1).ok).to.equal(true);
    expect(limits.size).to.equal(2);
    expect(limits.admit('busy', 1).ok, 'busy kept its spent bucket').to.equal(false);
    // Forgotten: `idle` comes back with a full bucket. Both others have calls in flight, so the
    // map grows past its bound rather than lose a place that must be given back.
    expect(limits.admit('idle', 1).ok).to.equal(true);
    expect(limits.size).to.equal(3);
  });
});
