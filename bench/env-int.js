/**
 * Integer settings of the benches, read from the environment (FH_BENCH_*): unset or empty means the
 * fallback; anything else must be an integer of at least `min`, or the bench stops naming the variable.
 */
'use strict';

function positiveInt(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be ${min === 1 ? 'a positive integer' : `an integer >= ${min}`}, got '${raw}'`);
  return n;
}

module.exports = { positiveInt };
