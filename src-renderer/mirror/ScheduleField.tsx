// Whether the mirror syncs by itself while the app runs, and how often (the Options tab). A value set elsewhere
// (the contract takes any whole number of hours) is offered as it is.
import { SCHEDULE_CHOICES, everyText } from '../../src-main/contract/schedule.ts';

function label(hours: number): string {
  if (hours === 0) return 'Only when I click Sync now';
  const text = everyText(hours);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function ScheduleField({ id, value, onChange }: { id: string; value: number; onChange: (hours: number) => void }) {
  const choices: number[] = SCHEDULE_CHOICES.includes(value as (typeof SCHEDULE_CHOICES)[number]) ? [...SCHEDULE_CHOICES] : [...SCHEDULE_CHOICES, value];
  return (
    <div className="field">
      <label htmlFor={id}>Sync by itself</label>
      <select id={id} value={value} onChange={(e) => onChange(Number(e.target.value))} aria-describedby={`${id}-hint`}>
        {choices.map((hours) => (
          <option key={hours} value={hours}>
            {label(hours)}
          </option>
        ))}
      </select>
      <p id={`${id}-hint`} className="field-hint">
        While the app is open, counted from the end of the last sync; a sync that is due when the app starts runs at
        once. A paused run waits for Resume. For a schedule without the app, run rsdesk sync from cron.
      </p>
    </div>
  );
}
