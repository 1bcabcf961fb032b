/** The types of parse-prometheus-text-format (it ships none): what engine-gauges.ts reads of it. */
declare module 'parse-prometheus-text-format' {
  interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
  }
  interface PrometheusFamily {
    name: string;
    help: string;
    type: string;
    metrics: PrometheusSample[];
  }
  /** Throws on a line that is not of the exposition format. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
