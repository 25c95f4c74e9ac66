import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useRef, type ReactNode } from 'react';

// Chart.js, registered piece by piece so the bundle holds only bars, lines and their scales.
Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, Legend);

export interface Series {
  label: string;
  values: number[];
  colour: string;
}

interface ChartFigureProps {
  /** The chart's accessible name, and its caption. */
  title: string;
  type: 'bar' | 'line';
  labels: string[];
  series: Series[];
  stacked?: boolean;
  /** The same figures as a table: the chart's text alternative. */
  table: ReactNode;
}

/**
 * A chart with an accessible name (the canvas is an image named by its title) and its data as a
 * table under "Show the data", for a screen reader or anyone who wants the numbers. Drawn
 * without animation, so it is complete when `data-drawn` is set (a test and the benchmark wait
 * for it) and nothing moves for those who asked for less motion.
 */
export function ChartFigure({ title, type, labels, series, stacked = false, table }: ChartFigureProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const figure = useRef<HTMLElement>(null);
  useEffect(() => {
    const config: ChartConfiguration<'bar' | 'line'> = {
      type,
      data: {
        labels,
        datasets: series.map((s) => ({
          label: s.label,
          data: s.values,
          backgroundColor: s.colour,
          borderColor: s.colour,
          pointRadius: 0,
          borderWidth: type === 'line' ? 2 : 0,
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: { x: { stacked, ticks: { maxTicksLimit: 8 } }, y: { stacked, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { display: series.length > 1 } },
      },
    };
    const chart = new Chart(canvas.current!, config);
    figure.current!.dataset.drawn = 'true';
    return () => {
      figure.current?.removeAttribute('data-drawn');
      chart.destroy();
    };
  }, [type, labels, series, stacked]);
  return (
    <figure ref={figure} className="chart">
      <figcaption>{title}</figcaption>
      <div className="chart-box">
        <canvas ref={canvas} role="img" aria-label={title} />
      </div>
      <details>
        <summary>Show the data: {title}</summary>
        {table}
      </details>
    </figure>
  );
}
