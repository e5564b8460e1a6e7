//! Each segment's chunks mapped to the slots of their vectors, kept for one generation of
//! the vector store, so a search by meaning does not look every chunk up again.

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::index::SegmentId;
use tantivy::Searcher;

use super::vectors::VectorStore;

/// No slot: the chunk has no vector (yet).
pub(super) const NO_SLOT: u32 = u32::MAX;

/// Each segment's chunks mapped to their vectors' slots, for one store generation.
#[derive(Default)]
pub(super) struct SlotCache {
    segments: HashMap<SegmentId, (u64, Arc<Vec<u32>>)>,
}

impl SlotCache {
    pub(super) fn slots(
        &mut self,
        segment: &tantivy::SegmentReader,
        store: &VectorStore,
    ) -> tantivy::Result<Arc<Vec<u32>>> {
        let id = segment.segment_id();
        if let Some((generation, slots)) = self.segments.get(&id) {
            if *generation == store.generation {
                return Ok(slots.clone());
            }
        }
        let ids = segment.fast_fields().u64("chunk")?.first_or_default_col(0);
        let slots: Arc<Vec<u32>> = Arc::new(
            (0..segment.max_doc())
                .map(|doc| store.slot(ids.get_val(doc)).unwrap_or(NO_SLOT))
                .collect(),
        );
        self.segments.insert(id, (store.generation, slots.clone()));
        Ok(slots)
    }

    /// Forgets segments no longer in `searcher` (merged away).
    pub(super) fn keep_only(&mut self, searcher: &Searcher) {
        let live: Vec<SegmentId> = searcher
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .collect();
        self.segments.retain(|id, _| live.contains(id));
    }
}
