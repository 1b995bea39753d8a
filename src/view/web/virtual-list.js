/* global document, requestAnimationFrame, ResizeObserver */
// A virtualised list of fixed-height rows: only the rows in view (plus a margin) exist in the DOM, so 10,000
// rows scroll like 30. Rows come from `getRow(i)`, which may answer null while their page is being fetched
// (a placeholder is drawn and `refresh()` redraws once it arrives).

export function virtualList({ container, rowHeight, total, render, placeholder, overscan = 8, onRange }) {
  const spacer = document.createElement('div');
  spacer.className = 'vl-spacer';
  container.append(spacer);
  let count = total;
  let drawn = new Map();
  let queued = false;

  const range = () => {
    const first = Math.max(0, Math.floor(container.scrollTop / rowHeight) - overscan);
    const last = Math.min(count - 1, Math.ceil((container.scrollTop + container.clientHeight) / rowHeight) + overscan);
    return { first, last };
  };

  const draw = () => {
    queued = false;
    spacer.style.height = `${count * rowHeight}px`;
    const { first, last } = range();
    const next = new Map();
    for (let i = first; i <= last; i++) {
      let el = drawn.get(i);
      if (el === undefined || el.dataset.placeholder === '1') {
        const fresh = render(i) ?? placeholder(i);
        fresh.style.top = `${i * rowHeight}px`;
        fresh.style.height = `${rowHeight}px`;
        if (el) el.replaceWith(fresh);
        else spacer.append(fresh);
        el = fresh;
      }
      next.set(i, el);
    }
    for (const [i, el] of drawn) if (!next.has(i)) el.remove();
    drawn = next;
    onRange?.(first, last);
  };

  const schedule = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(draw);
  };

  container.addEventListener('scroll', schedule, { passive: true });
  const resize = new ResizeObserver(schedule);
  resize.observe(container);
  draw();

  return {
    /** Redraw every row (data or selection changed). */
    refresh(newTotal = count) {
      count = newTotal;
      for (const el of drawn.values()) el.remove();
      drawn = new Map();
      draw();
    },
    /** Redraw rows still drawn as placeholders (their page arrived). */
    fill() {
      schedule();
    },
    range,
    scrollTo(i) {
      const top = i * rowHeight;
      if (top < container.scrollTop) container.scrollTop = top;
      else if (top + rowHeight > container.scrollTop + container.clientHeight)
        container.scrollTop = top + rowHeight - container.clientHeight;
      draw();
    },
    atEnd() {
      return container.scrollTop + container.clientHeight >= count * rowHeight - rowHeight;
    },
    destroy() {
      resize.disconnect();
      container.removeEventListener('scroll', schedule);
      spacer.remove();
    },
  };
}
