/**
 * Makes Chromium's PDF bytes a function of the HTML printed (issue 6: a retry of the same print
 * makes no second, different object). Chromium (Skia) stamps `/CreationDate` and `/ModDate` with the
 * wall clock; everything else it writes is the same for the same HTML. Both dates are replaced
 * by `date` (the certificate's issue date, midnight UTC). The replacement has the same length,
 * so the PDF's cross-reference offsets stay valid.
 */

const PDF_DATE = /\/(CreationDate|ModDate) \(D:\d{14}/g;

/**
 * Returns a copy of `pdf` whose info dates read `date` (`YYYY-MM-DD`) at 00:00:00.
 * Throws `RangeError` for a malformed date. A PDF without those dates is returned unchanged.
 */
export function withFixedPdfDates(pdf: Buffer, date: string): Buffer {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new RangeError(`date must be YYYY-MM-DD, got ${JSON.stringify(date)}`);
  const stamp = `${date.replaceAll('-', '')}000000`;
  // latin1 maps every byte to one char and back, so binary streams survive the round trip.
  return Buffer.from(
    pdf.toString('latin1').replace(PDF_DATE, (_m, field: string) => `/${field} (D:${stamp}`),
    'latin1',
  );
}
