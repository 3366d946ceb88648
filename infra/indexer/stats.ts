/** What the indexer reports about itself (the health query and metrics read it). */

export interface IndexerCounters {
  eventsAppended: number;
  /** appends refused because another writer had moved the cursor (a second indexer); each ends its round */
  appendsRefused: number;
  transactionsProcessed: number;
  failedTransactionsSkipped: number;
  unknownDiscriminators: number;
  /** slot of the newest transaction processed */
  lastSlot: number;
  /** cluster slot when the last complete catch-up round began: everything up to it is in */
  syncedSlot: number;
  clusterSlot: number;
  catchUpRounds: number;
  catchUpErrors: number;
}

export interface IndexerStats extends IndexerCounters {
  /** cluster slot minus the slot the stream is known complete up to */
  slotLag: number;
  websocketConnected: boolean;
  websocketReconnects: number;
}

export function newCounters(): IndexerCounters {
  return {
    eventsAppended: 0, appendsRefused: 0, transactionsProcessed: 0, failedTransactionsSkipped: 0,
    unknownDiscriminators: 0, lastSlot: 0, syncedSlot: 0, clusterSlot: 0, catchUpRounds: 0, catchUpErrors: 0,
  };
}
