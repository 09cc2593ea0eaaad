// Query annotations: a name and description on a saved query, made by the query-annotation routes
// (src/api/v1/query-annotations.ts) or by boards' query panels (source `board`).

export type AnnotationSource = 'query' | 'board';
/** What the object store holds for an annotation (timestamps come from the object). */
export interface StoredQueryAnnotation {
  name: string;
  description: string;
  query_id: string;
  source: AnnotationSource;
}
