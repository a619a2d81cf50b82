import DallySync
import Prometheus
import Synchronization

/// What the cloud has done with objects since it started, for `/stats` and `/metrics`:
/// uploads received and how many of them it held already, and what collection removed.
final class CloudObjectCounters: Sendable {
    struct Snapshot: Sendable {
        /// Chunk uploads accepted (their hash checked), whether stored now or held already.
        var chunksReceived: Int64 = 0
        /// Of those, chunks the cloud held already, and their bytes: sent for nothing.
        var chunksDeduplicated: Int64 = 0
        var bytesDeduplicated: Int64 = 0
        /// Manifests accepted, whether recorded now or held already.
        var manifestsReceived: Int64 = 0
        /// Manifests that came (with `?wait=`) before all their chunks: counted as they find chunks missing.
        var manifestsWaited: Int64 = 0
        var gcRuns: Int64 = 0
        var objectsCollected: Int64 = 0
        var chunksCollected: Int64 = 0
        var bytesCollected: Int64 = 0
    }

    private let counts = Mutex(Snapshot())
    private let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func chunkReceived(bytes: Int, deduplicated: Bool) {
        counts.withLock { total in
            total.chunksReceived += 1
            if deduplicated {
                total.chunksDeduplicated += 1
                total.bytesDeduplicated += Int64(bytes)
            }
        }
        registry.counter("dally_cloud_chunks_received_total", help: "Chunks received from gateways.")
            .increment()
        if deduplicated {
            registry.counter("dally_cloud_chunks_deduplicated_total", help: "Chunks received that the cloud already held.")
                .increment()
            registry.counter(
                "dally_cloud_chunk_bytes_deduplicated_total", help: "Bytes of chunks received that the cloud already held."
            ).increment(by: Int64(bytes))
        }
    }

    func manifestReceived() {
        counts.withLock { $0.manifestsReceived += 1 }
        registry.counter("dally_cloud_manifests_received_total", help: "Object manifests received (objects completed).")
            .increment()
    }

    func manifestWaited() {
        counts.withLock { $0.manifestsWaited += 1 }
        registry.counter(
            "dally_cloud_manifests_waited_total", help: "Object manifests that came with a wait before their last chunks."
        ).increment()
    }

    func collected(_ collection: ObjectCollection) {
        counts.withLock { total in
            total.gcRuns += 1
            total.objectsCollected += Int64(collection.objects)
            total.chunksCollected += Int64(collection.chunks)
            total.bytesCollected += collection.chunkBytes
        }
        registry.counter("dally_cloud_object_gc_runs_total", help: "Object garbage collection runs.")
            .increment()
        registry.counter("dally_cloud_objects_collected_total", help: "Objects no row version references, removed.")
            .increment(by: Int64(collection.objects))
        registry.counter("dally_cloud_chunks_collected_total", help: "Chunks no object lists, removed.")
            .increment(by: Int64(collection.chunks))
        registry.counter("dally_cloud_chunk_bytes_collected_total", help: "Bytes of chunks removed by collection.")
            .increment(by: collection.chunkBytes)
    }

    var snapshot: Snapshot { counts.withLock { $0 } }
}
