// Whether the mirror syncs by itself while the app runs, how often, and (for whole days) at what time (the Options
// tab). A value set elsewhere (the contract takes any whole number of hours, any minute of the day) is offered as it is.
import { clockText, everyText, SCHEDULE_CHOICES } from '../../src-main/contract/schedule.ts';

function label(hours: number): string {
  if (hours === 0) return 'Only when I click Sync now';
  const text = everyText(hours);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Every hour on the hour, and the kept time when it is not one of them. */
function timeChoices(atMinute: number | null): number[] {
  const hours = Array.from({ length: 24 }, (_, h) => h * 60);
  return atMinute === null || hours.includes(atMinute) ? hours : [...hours, atMinute].sort((a, b) => a - b);
}

export function ScheduleField({
  id,
  value,
  atMinute,
  onChange,
  onAtMinute,
}: {
  id: string;
  value: number;
  atMinute: number | null;
  onChange: (hours: number) => void;
  onAtMinute: (atMinute: number | null) => void;
}) {
  const choices: number[] = SCHEDULE_CHOICES.includes(value as (typeof SCHEDULE_CHOICES)[number]) ? [...SCHEDULE_CHOICES] : [...SCHEDULE_CHOICES, value];
  // A time of day only means something for whole days; for other intervals the field is not shown (the kept time stays).
  const wholeDays = value > 0 && value % 24 === 0;
  return (
    <>
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
      {wholeDays && (
        <div className="field">
          <label htmlFor={`${id}-at`}>Time of day</label>
          <select
            id={`${id}-at`}
            value={atMinute === null ? '' : String(atMinute)}
            onChange={(e) => onAtMinute(e.target.value === '' ? null : Number(e.target.value))}
            aria-describedby={`${id}-at-hint`}
          >
            <option value="">Any time of day</option>
            {timeChoices(atMinute).map((minute) => (
              <option key={minute} value={minute}>
                {clockText(minute)}
              </option>
            ))}
          </select>
          <p id={`${id}-at-hint`} className="field-hint">
            By this computer&apos;s clock. At a time, the sync starts then, even after a sync by hand earlier the same day;
            a time missed while the app was closed is made up when it opens.
          </p>
        </div>
      )}
    </>
  );
}
