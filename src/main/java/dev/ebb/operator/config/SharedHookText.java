package dev.ebb.operator.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.std.StringDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import dev.ebb.operator.drain.DrainHook;
import io.quarkus.kubernetes.client.KubernetesClientObjectMapperCustomizer;
import jakarta.inject.Singleton;
import java.io.IOException;

/**
 * The drain hook's text, about 16 KB, is in every deployment's hook ConfigMap, and engine Pods made by releases that
 * carried it in the preStop command still hold it there; the informers keep each object as read. At 2000 such Pods
 * that was 2000 equal copies, two thirds of the operator's byte arrays and enough to keep a 96 MiB heap collecting
 * without end (a class histogram of the packaged operator at 500 ModelDeployments of 4). Text read from the API server
 * that equals this release's hook is this release's one copy instead; nothing else changes.
 */
@Singleton
public class SharedHookText implements KubernetesClientObjectMapperCustomizer {
    @Override
    public void customize(ObjectMapper mapper) {
        mapper.registerModule(
                new SimpleModule("ebb-shared-hook-text").addDeserializer(String.class, new Sharing(DrainHook.SCRIPT)));
    }

    /** The JSON string as Jackson reads it, or {@code shared} when it has the same text. */
    static final class Sharing extends StringDeserializer {
        private final String shared;

        Sharing(String shared) {
            this.shared = shared;
        }

        @Override
        public String deserialize(JsonParser parser, DeserializationContext context) throws IOException {
            String read = super.deserialize(parser, context);
            return shared.equals(read) ? shared : read;
        }
    }
}
