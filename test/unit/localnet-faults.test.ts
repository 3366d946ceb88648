/** LOCALNET_FAULTS read as written, and the faults' draws a pure function of their seed. */
import { expect } from 'chai';
import { createFaults, DEFAULT_FAULT_RATES, describeFaults, FAULT_NAMES, parseFaults, STATUS_WINDOW_SLOTS } from '../../infra/localnet/faults.js';

describe('localnet faults', () => {
  it('reads all, a list with rates, and empty as off', () => {
    expect(parseFaults('all')).to.deep.equal(DEFAULT_FAULT_RATES);
    expect(parseFaults(' lost-answer=0.2, clock-lag ')).to.deep.equal({ 'lost-answer': 0.2, 'clock-lag': DEFAULT_FAULT_RATES['clock-lag'] });
    expect(parseFaults('all,send-errors=0.5')['send-errors']).to.equal(0.5);
    expect(parseFaults('send-errors=0.5,all')['send-errors']).to.equal(0.5);
    expect(parseFaults('')).to.deep.equal({});
    expect(describeFaults(parseFaults(''))).to.equal('off');
    expect(describeFaults(parseFaults('all'))).to.equal(FAULT_NAMES.map((n) => `${n}=${DEFAULT_FAULT_RATES[n]}`).join(','));
  });

  it('refuses an unknown fault and a rate outside [0, 1]', () => {
    expect(() => parseFaults('lost-answers')).to.throw('unknown fault "lost-answers"');
    expect(() => parseFaults('lost-answer=2')).to.throw('rate of lost-answer');
    expect(() => parseFaults('lost-answer=')).to.throw('rate of lost-answer');
    expect(() => parseFaults('lost-answer=x')).to.throw('rate of lost-answer');
  });

  it('draws the same faults for the same seed, and one fault\'s rate never shifts another\'s sequence', () => {
    const run = (spec: string, seed: string): string[] => {
      const f = createFaults(parseFaults(spec), seed, () => 1);
      return Array.from({ length: 200 }, (_, i) => {
        const delay = f.landingDelay(`sig${i}`);
        const answer = f.answer(`sig${i}`);
        return `${delay}:${answer ? JSON.stringify(answer) : '-'}`;
      });
    };
    const lostOf = (seq: string[]): string[] => seq.map((s) => (s.includes('"lost"') ? s.slice(s.indexOf(':') + 1) : '-'));
    expect(run('all', 'a')).to.deep.equal(run('all', 'a'));
    expect(run('all', 'a')).to.not.deep.equal(run('all', 'b'));
    expect(lostOf(run('lost-answer', 'a'))).to.deep.equal(lostOf(run('lost-answer,delayed-landing,send-errors=0.3', 'a')));
  });

  it('forgets a status only past the status window, the same way on every read', () => {
    let slot = 10;
    const f = createFaults(parseFaults('forgetful-status=0.5'), 's', () => slot);
    expect(f.forgets('x', 5)).to.equal(false);
    slot = 5 + STATUS_WINDOW_SLOTS + 1;
    const first = Array.from({ length: 100 }, (_, i) => f.forgets(`sig${i}`, 5));
    expect(Array.from({ length: 100 }, (_, i) => f.forgets(`sig${i}`, 5))).to.deep.equal(first);
    expect(first.filter(Boolean).length).to.be.within(30, 70);
  });
});
