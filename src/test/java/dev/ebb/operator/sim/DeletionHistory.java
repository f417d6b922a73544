package dev.ebb.operator.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.crud.AttributeSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;

/**
 * The deletions a watch opened from a resourceVersion still has to hear of. A real API server replays every event
 * after the watch's resourceVersion from its watch cache, and answers 410 Expired to a version older than the cache
 * holds (k8s.io/apiserver v0.37.2, pkg/storage/cacher/watch_cache.go, getAllEventsSinceLocked). fabric8's mock store
 * answers every new watch with an ADDED event for each object it holds and nothing more, so a client whose watch came
 * back after an object was deleted kept that object for good: an informer resumed after a dropped watch never lost a
 * Pod deleted meanwhile. The store keeps, per object, its last deletion (its metadata alone: what a client needs to
 * drop it from a cache and find its owner), until the object is written again or the history is full.
 */
final class DeletionHistory {
    private static final ObjectMapper JSON = new ObjectMapper();

    private record Deletion(long resourceVersion, AttributeSet key, String event) {}

    private final int capacity;
    /** By object identity, oldest deletion first. */
    private final LinkedHashMap<String, Deletion> deletions = new LinkedHashMap<>();
    /** Deletions at or below this version were forgotten to keep the history bounded. */
    private long forgottenUpTo;

    DeletionHistory(int capacity) {
        this.capacity = capacity;
    }

    /**
     * @param identity the object's API version, kind, namespace and name
     * @param resourceVersion the version the deletion was given
     * @param key the store's attributes of the object, which a watch's query matches
     * @param object the object as it was deleted
     */
    synchronized void deleted(String identity, long resourceVersion, AttributeSet key, String object) {
        deletions.remove(identity);
        deletions.put(identity, new Deletion(resourceVersion, key, deletedEvent(object, resourceVersion)));
        while (deletions.size() > capacity) {
            Iterator<Deletion> oldest = deletions.values().iterator();
            forgottenUpTo = Math.max(forgottenUpTo, oldest.next().resourceVersion());
            oldest.remove();
        }
    }

    /** The object exists again: a watch's own ADDED event carries it, and its old deletion is not to be replayed. */
    synchronized void written(String identity) {
        deletions.remove(identity);
    }

    /**
     * The DELETED events after this version that a watch with this query must be sent, oldest first; empty when the
     * version is older than what is remembered, which the server answers with 410 Expired.
     */
    synchronized Optional<List<String>> since(long resourceVersion, AttributeSet query) {
        if (resourceVersion < forgottenUpTo) {
            return Optional.empty();
        }
        List<String> events = new ArrayList<>();
        deletions.values().stream()
                .filter(d -> d.resourceVersion() > resourceVersion && d.key().matches(query))
                .forEach(d -> events.add(d.event()));
        return Optional.of(events);
    }

    /** Sends under the history's lock, so that no write slips between a replayed deletion and the watch's start. */
    synchronized void replay(
            long resourceVersion, AttributeSet query, java.util.function.Consumer<Optional<List<String>>> send) {
        send.accept(since(resourceVersion, query));
    }

    private static String deletedEvent(String object, long resourceVersion) {
        try {
            ObjectNode whole = (ObjectNode) JSON.readTree(object);
            ObjectNode kept = JSON.createObjectNode();
            kept.set("apiVersion", whole.get("apiVersion"));
            kept.set("kind", whole.get("kind"));
            ObjectNode metadata = whole.path("metadata").isObject()
                    ? ((ObjectNode) whole.get("metadata")).deepCopy()
                    : JSON.createObjectNode();
            metadata.put("resourceVersion", Long.toString(resourceVersion));
            kept.set("metadata", metadata);
            ObjectNode event = JSON.createObjectNode();
            event.put("type", "DELETED");
            event.set("object", kept);
            return JSON.writeValueAsString(event);
        } catch (IOException e) {
            throw new UncheckedIOException("unreadable deleted object", e);
        }
    }
}
