import { routeLabel } from '../../src-main/contract/routes.ts';
import type { DiscoveryStep } from '../../src-main/contract/types.ts';

/** The routes discovery tried, in order, as they happen. */
export function DiscoverySteps({ steps, running }: { steps: DiscoveryStep[]; running: boolean }) {
  return (
    <ol className="steps" aria-label="Discovery steps" aria-live="polite">
      {steps.map((step, i) => (
        <li key={i} className={`step ${step.found ? 'step-found' : 'step-missed'}`} data-route={step.route}>
          <span className="step-mark" role="img" aria-label={step.found ? 'found' : 'not found'}>
            {step.found ? '✓' : '✗'}
          </span>
          <span className="step-route">{routeLabel(step.route)}</span>
          <span className="step-body">
            <span className="step-url" title={step.url}>{step.url}</span>
            <span className="step-message">{step.message}</span>
          </span>
        </li>
      ))}
      {running && (
        <li className="step step-running">
          <span className="spinner" aria-hidden="true" />
          <span className="step-route">discovering…</span>
        </li>
      )}
    </ol>
  );
}
