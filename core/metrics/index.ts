export { metricsService, type MetricsService, type MetricsView, type MetricsDataRow, type MetricsServiceDeps } from './service.js';
export { metricsRollup, ROLLUP_CURSOR, type MetricsRollup, type MetricsRollupDeps } from './rollup.js';
export { metricNames, countNames, rateDefinitions, type MetricName } from './names.js';
export { dimensionNames, MAX_FILTER_IDS, type RawMetricsQuery } from './query.js';
export { granularities, MAX_PERIODS, type Granularity } from './periods.js';
export * from './rollup.js';
export { rollupWork, ROLLUP_WORK } from './rollup-work.js';
