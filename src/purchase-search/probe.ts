/**
 * Choosing the trigram-index lookup ("probe") for a search phrase.
 *
 * A pg_trgm GIN lookup of `LIKE '%phrase%'` ANDs every trigram of the phrase, and its cost grows
 * with how common those trigrams are: in `kim.park.123@example.com` or `COI-1042-1-1-9F3A61C2B7`
 * most trigrams (`exa`, `com`, `coi`…) are in nearly every row, and reading their posting lists
 * costs far more than the match itself (150 ms against 1 ms at 1 000 000 purchases). Any pattern
 * made of some of the phrase's words, in their order, joined by `%`, is implied by the phrase,
 * so it can stand in for it at the index while the exact phrase is checked on each candidate row.
 *
 * Short phrases (few trigrams) are looked up whole. Longer ones use their rarest word (by how
 * many rows of a sample of the table contain it), plus the next rarest when the rarest is not
 * rare; without a sample (no statistics yet), the longest words.
 */
import { escapeLike, likePattern } from './repository';

/** Up to this many characters the whole phrase is the probe. */
const WHOLE_PHRASE_MAX = 10;
/** Words shorter than this give no trigram of their own that narrows much. */
const MIN_WORD = 3;
/** Words of a long phrase considered (the longest ones), to bound the work on huge input. */
const MAX_CANDIDATES = 8;
/** A word found in more than this share of the sample is not selective alone. */
const RARE_SHARE = 0.002;

/**
 * The LIKE pattern (escaped) the trigram index should look up for `phrase`, or null when no
 * trigram can narrow the search (a phrase of one or two characters). `sample`: rows of
 * `search_doc` (lower case), or null when none are known.
 */
export function choosePhraseProbe(phrase: string, sample: readonly string[] | null): string | null {
  const words = [...phrase.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => ({ text: m[0], at: m.index }));
  if (!words.some((w) => w.text.length >= MIN_WORD) && phrase.replace(/[^\p{L}\p{N}]/gu, '').length < MIN_WORD) return null;
  if (phrase.length <= WHOLE_PHRASE_MAX) return likePattern(phrase);
  const candidates = words
    .filter((w) => w.text.length >= MIN_WORD)
    .sort((a, b) => b.text.length - a.text.length || a.at - b.at)
    .slice(0, MAX_CANDIDATES);
  if (candidates.length === 0) return likePattern(phrase);

  const share = new Map<string, number>();
  if (sample && sample.length > 0) {
    for (const c of candidates) {
      const w = c.text.toLowerCase();
      if (!share.has(w)) share.set(w, sample.reduce((n, doc) => (doc.includes(w) ? n + 1 : n), 0) / sample.length);
    }
  }
  const shareOf = (w: { text: string }) => share.get(w.text.toLowerCase()) ?? 0;
  // Stable: equal shares keep the longest-first order.
  const ranked = [...candidates].sort((a, b) => shareOf(a) - shareOf(b));
  const chosen = [ranked[0]!];
  const second = ranked[1];
  if (second && (sample ? shareOf(ranked[0]!) > RARE_SHARE : true)) chosen.push(second);
  return `%${chosen
    .sort((a, b) => a.at - b.at)
    .map((w) => escapeLike(w.text))
    .join('%')}%`;
}
