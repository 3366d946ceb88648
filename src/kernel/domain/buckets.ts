/**
 * Revenue buckets: the UTC day, the ISO week (Monday 00:00 UTC) and the UTC calendar
 * month a time falls in, each named by its start in unix seconds.
 */

export const BUCKETS = ['day', 'week', 'month'] as const;
export type Bucket = (typeof BUCKETS)[number];

const DAY = 86_400;

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

export function bucketStart(bucket: Bucket, seconds: number): number {
  const day = floorDiv(seconds, DAY);
  switch (bucket) {
    case 'day':
      return day * DAY;
    case 'week':
      // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday
      return (day - (((day + 3) % 7) + 7) % 7) * DAY;
    case 'month': {
      const d = new Date(day * DAY * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
    }
    default: {
      const never: never = bucket;
      throw new Error(`unknown bucket ${String(never)}`);
    }
  }
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucketStart(bucket: Bucket, start: number): number {
  if (bucket === 'day') return start + DAY;
  if (bucket === 'week') return start + 7 * DAY;
  const d = new Date(start * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}
