/** A gear outline: eight teeth around a hub, built once from geometry rather than pasted path data. */
function gearPath(teeth: number, outer: number, inner: number): string {
  const step = (2 * Math.PI) / teeth;
  const point = (angle: number, radius: number) =>
    `${(12 + radius * Math.cos(angle)).toFixed(2)} ${(12 + radius * Math.sin(angle)).toFixed(2)}`;
  const parts: string[] = [];
  for (let i = 0; i < teeth; i++) {
    const a = i * step;
    parts.push(point(a - step * 0.3, inner), point(a - step * 0.17, outer), point(a + step * 0.17, outer), point(a + step * 0.3, inner));
  }
  return `M${parts.join(' L')} Z`;
}

const GEAR = gearPath(8, 10, 7.4);

export function GearIcon() {
  return (
    <svg
      width="17"
      height="17"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d={GEAR} />
      <circle cx="12" cy="12" r="3.2" />
    </svg>
  );
}
