package dev.ebb.operator.config;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Pods read from the API server share one copy of this release's hook text, and read the same as before. */
class SharedHookTextTest {
    private static final KubernetesSerialization PLAIN = new KubernetesSerialization();
    private static final KubernetesSerialization SHARING = sharing();

    private static KubernetesSerialization sharing() {
        return new KubernetesSerialization(sharingMapper(), true);
    }

    /** A plain mapper with the operator's customization, as the client's own gets it. */
    static ObjectMapper sharingMapper() {
        ObjectMapper mapper = new ObjectMapper();
        new SharedHookText().customize(mapper);
        return mapper;
    }

    private static Pod hookedPod() {
        DesiredDeployment desired = deployment("qwen", "vLLM").role(role("server")).desired();
        return new PodRenderer().render(new MemberSlot(desired, desired.roles().get(0), 0, 0), "h");
    }

    private static List<String> hookCommand(Pod pod) {
        return pod.getSpec().getContainers().get(0).getLifecycle().getPreStop().getExec().getCommand();
    }

    @Test
    void podsReadFromJsonHoldThisReleasesOneCopyOfTheHookText() {
        String json = PLAIN.asJson(hookedPod());

        Pod first = SHARING.unmarshal(json, Pod.class);
        Pod second = SHARING.unmarshal(json, Pod.class);

        assertThat(hookCommand(first)).contains(DrainHook.SCRIPT);
        assertThat(hookCommand(first).get(hookCommand(first).indexOf(DrainHook.SCRIPT))).isSameAs(DrainHook.SCRIPT);
        assertThat(hookCommand(second).get(hookCommand(second).indexOf(DrainHook.SCRIPT))).isSameAs(DrainHook.SCRIPT);
        assertThat(first).as("nothing else read differently").isEqualTo(PLAIN.unmarshal(json, Pod.class));
    }

    @Test
    void withoutItEveryPodReadHoldsItsOwnCopy() {
        String json = PLAIN.asJson(hookedPod());

        List<String> command = hookCommand(PLAIN.unmarshal(json, Pod.class));

        assertThat(command.get(command.indexOf(DrainHook.SCRIPT))).isNotSameAs(DrainHook.SCRIPT);
    }

    @Test
    void anotherTextOfTheSameLengthAndEveryOtherStringAreReadAsTheyAre() throws Exception {
        String other = "#" + DrainHook.SCRIPT.substring(1);
        ObjectMapper mapper = sharingMapper();

        List<String> read = mapper.readValue(mapper.writeValueAsString(List.of(other, "python3", "")), new TypeReference<List<String>>() { });

        assertThat(read).containsExactly(other, "python3", "");
        assertThat(read.get(0)).isNotSameAs(DrainHook.SCRIPT);
        assertThat(mapper.readValue("null", String.class)).isNull();
    }
}
