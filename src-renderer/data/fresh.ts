// Events win over older answers. The engine's events and the answers to reads travel apart (SSE or IPC beside
// HTTP or invoke), so an answer made before a change can arrive after the event that announced it. These two
// helpers are the one way every view takes an event into the cache; mirrors, Sources and Live all use them.
import type { QueryClient, QueryKey } from '@tanstack/react-query';

/**
 * Reads `queryKey` again (every query when absent), from the engine as it is now. A read already under way is
 * dropped first: its answer may have been made before the change that calls for this one, and react-query would keep
 * it (a query that has no data yet joins the read in flight instead of starting another), so a view opened as a run
 * ended could show the run as going on for good. Cancelling is synchronous: the new read starts at once.
 */
export function readAgain(client: QueryClient, queryKey?: QueryKey): void {
  const filters = queryKey ? { queryKey } : {};
  void client.cancelQueries(filters);
  void client.invalidateQueries(filters);
}

/**
 * Puts what an event brought in the cache. A read of the same query still under way may have been answered before
 * the event: it is replaced by a new read, which can only be newer. (Cancelling it first instead leaves a query that
 * had no data reverting after the event's data is put, and the view does not hear of the data.)
 */
export function putFromEvent<T>(client: QueryClient, queryKey: QueryKey, data: T): void {
  const reading = client.isFetching({ queryKey, exact: true }) > 0;
  client.setQueryData(queryKey, data);
  // With data in the cache, react-query cancels the read under way rather than joining it.
  if (reading) void client.refetchQueries({ queryKey, exact: true }, { cancelRefetch: true });
}
