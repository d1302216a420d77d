/**
 * Draws the turn bench's results (BENCH_RESULTS of turn-bench.ts) as an SVG: CPU per turn and
 * turns per second against concurrency, the service beside the plain SDK loop, one colour per
 * Node. Plain SVG written here, so the chart needs no plotting library and reads in any browser
 * and on GitHub.
 *
 *   npx tsx bench/turn-bench-chart.ts <results.json> <out.svg> [sse|json]
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { TurnBenchCell, TurnBenchResults } from './turn-bench.js';

const PANEL_WIDTH = 420;
const PANEL_HEIGHT = 300;
const MARGIN = { top: 56, right: 24, bottom: 64, left: 64 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

interface Series {
  readonly label: string;
  readonly colour: string;
  readonly dashed: boolean;
  readonly points: readonly (readonly [number, number])[];
}

interface Panel {
  readonly title: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

export function drawTurnBenchChart(results: TurnBenchResults, protocol: 'sse' | 'json'): string {
  const cells = results.cells.filter((cell) => cell.protocol === protocol);
  if (cells.length === 0) throw new Error(`the results hold no ${protocol} cells`);
  const nodes = [...new Set(cells.map((cell) => cell.node))];
  const seriesOf = (pick: (cell: TurnBenchCell) => readonly [number, number], who: 'service' | 'plain loop'): Series[] =>
    nodes.map((node, index) => ({
      label: `${who}, ${node}`,
      colour: COLOURS[index % COLOURS.length] ?? '#000',
      dashed: who === 'plain loop',
      points: cells
        .filter((cell) => cell.node === node)
        .map(pick)
        .toSorted((a, b) => a[0] - b[0]),
    }));
  const panels: Panel[] = [
    {
      title: 'CPU per turn (lower is better)',
      yLabel: 'CPU ms per turn',
      series: [...seriesOf((cell) => [cell.concurrency, cell.serviceCpuMsPerTurn], 'service'), ...seriesOf((cell) => [cell.concurrency, cell.plainCpuMsPerTurn], 'plain loop')],
    },
    {
      title: 'Throughput (higher is better)',
      yLabel: 'turns per second',
      series: [...seriesOf((cell) => [cell.concurrency, cell.serviceTurnsPerSecond], 'service'), ...seriesOf((cell) => [cell.concurrency, cell.plainTurnsPerSecond], 'plain loop')],
    },
  ];
  const width = 2 * (PANEL_WIDTH + MARGIN.left + MARGIN.right);
  const legendHeight = 22 * Math.ceil(panels[0]!.series.length / 2) + 10;
  const height = PANEL_HEIGHT + MARGIN.top + MARGIN.bottom + legendHeight;
  const title = `turn-runtime vs a plain openai SDK loop, ${protocol.toUpperCase()}: ${results.cores} × ${results.cpu}, ${results.date.slice(0, 10)}, ${results.turnsPerRun} turns per run, median of ${results.reps}`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="13">${escape(title)}</text>`,
    ...panels.map((panel, index) => drawPanel(panel, index * (PANEL_WIDTH + MARGIN.left + MARGIN.right))),
    drawLegend(panels[0]!.series, PANEL_HEIGHT + MARGIN.top + MARGIN.bottom, width),
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

function drawPanel(panel: Panel, left: number): string {
  const xs = panel.series.flatMap((series) => series.points.map(([x]) => x));
  const ys = panel.series.flatMap((series) => series.points.map(([, y]) => y));
  const xMin = Math.log2(Math.min(...xs));
  const xMax = Math.max(Math.log2(Math.max(...xs)), xMin + 1);
  const yMax = niceCeiling(Math.max(...ys) * 1.08);
  const x0 = left + MARGIN.left;
  const y0 = MARGIN.top + PANEL_HEIGHT;
  const toX = (x: number): number => x0 + ((Math.log2(x) - xMin) / (xMax - xMin)) * PANEL_WIDTH;
  const toY = (y: number): number => y0 - (y / yMax) * PANEL_HEIGHT;
  const out: string[] = [`<text x="${x0 + PANEL_WIDTH / 2}" y="${MARGIN.top - 14}" text-anchor="middle" font-weight="bold">${escape(panel.title)}</text>`];
  for (let step = 0; step <= 5; step += 1) {
    const value = (yMax * step) / 5;
    const y = toY(value);
    out.push(`<line x1="${x0}" x2="${x0 + PANEL_WIDTH}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`, `<text x="${x0 - 6}" y="${y + 4}" text-anchor="end">${formatTick(value)}</text>`);
  }
  for (const x of [...new Set(xs)].toSorted((a, b) => a - b)) {
    out.push(`<line x1="${toX(x)}" x2="${toX(x)}" y1="${y0}" y2="${y0 + 5}" stroke="#333"/>`, `<text x="${toX(x)}" y="${y0 + 18}" text-anchor="middle">${x}</text>`);
  }
  out.push(
    `<line x1="${x0}" x2="${x0 + PANEL_WIDTH}" y1="${y0}" y2="${y0}" stroke="#333"/>`,
    `<line x1="${x0}" x2="${x0}" y1="${MARGIN.top}" y2="${y0}" stroke="#333"/>`,
    `<text x="${x0 + PANEL_WIDTH / 2}" y="${y0 + 38}" text-anchor="middle">concurrent turns (C)</text>`,
    `<text transform="translate(${left + 16} ${MARGIN.top + PANEL_HEIGHT / 2}) rotate(-90)" text-anchor="middle">${escape(panel.yLabel)}</text>`,
  );
  for (const series of panel.series) {
    const points = series.points.map(([x, y]) => `${toX(x).toFixed(1)},${toY(y).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${series.colour}" stroke-width="2"${series.dashed ? ' stroke-dasharray="6 4"' : ''} points="${points.join(' ')}"/>`);
    for (const [x, y] of series.points) out.push(`<circle cx="${toX(x).toFixed(1)}" cy="${toY(y).toFixed(1)}" r="3" fill="${series.colour}"/>`);
  }
  return out.join('\n');
}

function drawLegend(series: readonly Series[], top: number, width: number): string {
  const columnWidth = 260;
  const left = (width - 2 * columnWidth) / 2;
  return series
    .map((entry, index) => {
      const x = left + (index % 2) * columnWidth;
      const y = top + 22 * Math.floor(index / 2);
      return [
        `<line x1="${x}" x2="${x + 36}" y1="${y}" y2="${y}" stroke="${entry.colour}" stroke-width="2"${entry.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
        `<text x="${x + 44}" y="${y + 4}">${escape(entry.label)}</text>`,
      ].join('\n');
    })
    .join('\n');
}

/** The smallest 1, 2 or 5 × 10ⁿ at or above `value`, so the axis ends on a round number. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((factor) => factor * power >= value) ?? 10) * power;
}

function formatTick(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const [input, output, protocol = 'sse'] = process.argv.slice(2);
  if (input === undefined || output === undefined || (protocol !== 'sse' && protocol !== 'json')) {
    console.error('usage: tsx bench/turn-bench-chart.ts <results.json> <out.svg> [sse|json]');
    process.exit(2);
  }
  const results = JSON.parse(await readFile(input, 'utf8')) as TurnBenchResults;
  await writeFile(output, drawTurnBenchChart(results, protocol));
  console.log(`wrote ${output}`);
}
