// Documents (PDF, Word, OpenDocument, EPUB) open as their extracted text, page by page;
// HTML is text and opens in the editor. The same rule as the app's read_document.
const DOCUMENT = /\.(pdf|docx|odt|epub)$/i;

export function isDocument(path: string): boolean {
  return DOCUMENT.test(path);
}
