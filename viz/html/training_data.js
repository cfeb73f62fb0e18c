// The run's history (trace meta["history"], see genesis/debug/run_history.py) as the charts
// of the Training view read it. A number that is not finite arrives as the string "NaN",
// "Infinity" or "-Infinity" (genesis.debug.json_values) and becomes the JavaScript number,
// so it is marked on a chart, never dropped; null stays null (no reading at that step).
const NON_FINITE_NAMES = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };
// TensorBoard's distribution bands (genesis.debug.step_series.BANDS), as percentiles.
const BAND_PERCENTILES = [0, 6.68, 15.87, 30.85, 50, 69.15, 84.13, 93.32, 100];

function historyNumber(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return value;
  if (Object.prototype.hasOwnProperty.call(NON_FINITE_NAMES, value)) return NON_FINITE_NAMES[value];
  return null;
}

// A StepSeries dict -> { points: [{ step, value }], bins: [{ first, last, readings, nonFinite,
// min, max, mean, last }] }; empty lists for a missing series.
function readSeries(series) {
  const steps = (series && series.steps) || [];
  const values = (series && series.values) || [];
  const points = steps.map((step, index) => ({ step, value: historyNumber(values[index]) }));
  const bins = ((series && series.summary) || []).map((bin) => ({
    first: bin.first_step, last: bin.last_step, readings: bin.readings || 0, nonFinite: bin.non_finite || 0,
    min: historyNumber(bin.min), max: historyNumber(bin.max), mean: historyNumber(bin.mean),
    lastValue: historyNumber(bin.last),
  }));
  return { points, bins };
}

// Whether a read series holds any reading at all (a finite or non-finite value, or a bin).
function seriesHasReadings(read) {
  return read.bins.some((bin) => bin.readings > 0) || read.points.some((point) => point.value !== null);
}

// Distribution samples -> [{ step, percentiles (9 numbers) | null, count, nonFinite }].
function readSamples(samples) {
  return (samples || []).map((sample) => ({
    step: sample.step, count: sample.count || 0, nonFinite: sample.non_finite || 0,
    percentiles: Array.isArray(sample.percentiles) ? sample.percentiles.map(historyNumber) : null,
  }));
}

// "NaN", "+Inf", "-Inf" or the number in the page's compact form.
function formatReading(value) {
  if (value === null || value === undefined) return "–";
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return formatNumber(value);
}

function formatPercent(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return formatReading(value);
  const percent = 100 * value;
  return `${percent.toFixed(percent !== 0 && Math.abs(percent) < 1 ? 2 : 1)}%`;
}

// Whether `history` has anything to draw: some series with a reading.
function historyIsEmpty(history) {
  const anySeries = (series) => seriesHasReadings(readSeries(series));
  if (anySeries(history.loss)) return false;
  for (const parameter of Object.values(history.parameters || {})) {
    if (anySeries(parameter.grad_norm) || anySeries(parameter.update_ratio)
      || (parameter.grad || []).length || (parameter.weight || []).length) return false;
  }
  for (const module of Object.values(history.activations || {})) {
    if (["mean", "std", "zeros", "dead", "saturated"].some((key) => anySeries(module[key]))) return false;
  }
  return true;
}

// The parameter names a finding concerns: those it lists, and those inside its module.
function parametersOfFinding(finding, names) {
  const listed = new Set(((finding.details || {}).parameters || []).filter((name) => typeof name === "string"));
  const module = finding.module;
  return names.filter((name) => listed.has(name)
    || (module && (name === module || name.startsWith(`${module}.`))));
}
