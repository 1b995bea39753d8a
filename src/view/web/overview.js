/* global document, getComputedStyle, devicePixelRatio */
// The whole run on two lanes against time: LLM calls above, MCP and HTTP calls below, failures in red, blocked in
// purple, semantic matches in amber. Drawn once into an offscreen canvas; the band showing the rows in view is
// drawn over it as the list scrolls. A click opens the step that was running (or last started) at that time.

const LANE_H = 20;
const TOP = 4;
const LABEL_W = 70;

export function drawOverview(canvas, o, onPick) {
  const css = getComputedStyle(document.documentElement);
  const color = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
  const colors = {
    L: color('--llm', '#3b82f6'),
    T: color('--tool', '#10b981'),
    e: color('--err', '#dc2626'),
    b: color('--blocked', '#7c3aed'),
    m: color('--err', '#dc2626'),
    s: color('--semantic', '#d97706'),
    text: color('--muted', '#6b7280'),
    band: color('--band', 'rgba(59,130,246,0.15)'),
  };
  const ratio = devicePixelRatio || 1;
  const width = canvas.clientWidth || 800;
  const height = TOP * 2 + LANE_H * 2 + 4;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.height = `${height}px`;
  const span = Math.max(o.spanMs, 1);
  const plotW = width - LABEL_W - 4;
  const x = (t) => LABEL_W + (t / span) * plotW;

  const base = document.createElement('canvas');
  base.width = canvas.width;
  base.height = canvas.height;
  const b = base.getContext('2d');
  b.scale(ratio, ratio);
  b.font = '11px system-ui, sans-serif';
  b.fillStyle = colors.text;
  b.fillText('LLM', 6, TOP + 14);
  b.fillText('MCP/HTTP', 6, TOP + LANE_H + 16);
  for (let i = 0; i < o.start.length; i++) {
    const lane = o.lane[i];
    const mark = o.mark[i];
    b.fillStyle = mark === '.' ? colors[lane] : colors[mark];
    const y = TOP + (lane === 'L' ? 0 : LANE_H + 2);
    b.fillRect(x(o.start[i]), y, Math.max(1, (o.dur[i] / span) * plotW), LANE_H - 2);
  }

  const ctx = canvas.getContext('2d');
  let bandRange = null;
  const paint = () => {
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(base, 0, 0);
    if (bandRange) {
      ctx.scale(ratio, ratio);
      ctx.fillStyle = colors.band;
      const x0 = x(bandRange[0]);
      ctx.fillRect(x0, 0, Math.max(2, x(bandRange[1]) - x0), height);
    }
  };
  paint();

  canvas.onclick = (ev) => {
    const rect = canvas.getBoundingClientRect();
    const t = ((ev.clientX - rect.left - LABEL_W) / plotW) * span;
    if (t < 0 || o.start.length === 0) return;
    // Steps are in start order: the last one started at or before t.
    let lo = 0;
    let hi = o.start.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (o.start[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    onPick(lo);
  };

  return {
    band(t0, t1) {
      bandRange = [t0, t1];
      paint();
    },
  };
}
