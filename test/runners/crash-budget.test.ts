import { expect } from 'chai';
import { CrashBudget } from '../../core/runners/crash-budget.ts';

describe('CrashBudget', () => {
  const policy = { failures: 3, windowMs: 1_000, cooldownMs: 5_000 };

  it('quarantines on the Nth failure within the window, not before, and says why and until when', () => {
    const budget = new CrashBudget(policy);
    expect(budget.record('a', 0)).to.equal(undefined);
    expect(budget.record('b', 100)).to.equal(undefined);
    const q = budget.record('exited with code 9', 200)!;
    expect(q.quarantined).to.equal(true);
    expect(q.until).to.equal(5_200);
    expect(q.reason).to.match(
      /^3 crashes or timeouts within 1000 ms \(last: exited with code 9\); calls fail until 1970-01-01T00:00:05\.200Z$/,
    );
    expect(budget.health(5_199).quarantined).to.equal(true);
  });

  it('forgets failures older than the window', () => {
    const budget = new CrashBudget(policy);
    budget.record('a', 0);
    budget.record('b', 500);
    expect(budget.record('c', 1_200)).to.equal(undefined); // the first one fell out of the window
    expect(budget.health(1_200).quarantined).to.equal(false);
  });

  it('lifts the quarantine after the cooldown with a clean slate', () => {
    const budget = new CrashBudget(policy);
    for (const t of [0, 1, 2]) budget.record('x', t);
    expect(budget.health(5_002)).to.deep.equal({ quarantined: false });
    expect(budget.restartDelay(5_002)).to.equal(0);
    expect(budget.record('y', 5_003)).to.equal(undefined);
  });

  it('reads the clock it was given when no time is passed', () => {
    let now = 1_000;
    const budget = new CrashBudget(policy, () => now);
    for (let i = 0; i < 3; i++) budget.record('x');
    expect(budget.health()).to.include({ quarantined: true, until: 6_000 });
    expect(budget.restartDelay()).to.equal(400);
    now = 6_000;
    expect(budget.health()).to.deep.equal({ quarantined: false });
    expect(budget.restartDelay()).to.equal(0);
  });

  it('backs restarts off exponentially while failures come in a row, and resets after a success', () => {
    const budget = new CrashBudget({ ...policy, failures: 100 });
    expect(budget.restartDelay(0)).to.equal(0);
    budget.record('x', 0);
    expect(budget.restartDelay(0)).to.equal(100);
    expect(budget.restartDelay(60)).to.equal(40);
    budget.record('x', 0);
    expect(budget.restartDelay(0)).to.equal(200);
    for (let i = 0; i < 20; i++) budget.record('x', 0);
    expect(budget.restartDelay(0)).to.equal(5_000);
    budget.succeeded();
    expect(budget.restartDelay(0)).to.equal(0);
  });
});
