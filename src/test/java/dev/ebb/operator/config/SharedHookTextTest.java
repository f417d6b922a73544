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
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hook ConfigMaps, and Pods of releases that carried the hook inline, read from the API server share one copy of this
 * release's hook text, and read the same as before.
 */
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

    private static DesiredDeployment qwen() {
        return deployment("qwen", "vLLM").role(role("server")).desired();
    }

    /** The deployment's hook ConfigMap, which holds this release's text. */
    private static ConfigMap hookScript() {
        return new PodRenderer().hookConfigMap(qwen());
    }

    /** A Pod of a release that carried the hook's text inline in its preStop command. */
    private static Pod podOfAnInlineRelease() {
        DesiredDeployment desired = qwen();
        Pod pod =
                new PodRenderer().render(new MemberSlot(desired, desired.roles().get(0), 0, 0), "h");
        List<String> command = new ArrayList<>(hookCommand(pod));
        command.set(2, DrainHook.SCRIPT);
        pod.getSpec()
                .getContainers()
                .get(0)
                .getLifecycle()
                .getPreStop()
                .getExec()
                .setCommand(command);
        return pod;
    }

    private static List<String> hookCommand(Pod pod) {
        return pod.getSpec()
                .getContainers()
                .get(0)
                .getLifecycle()
                .getPreStop()
                .getExec()
                .getCommand();
    }

    private static String scriptOf(ConfigMap script) {
        return script.getData().get(DrainHook.FILE);
    }

    @Test
    void hookConfigMapsReadFromJsonHoldThisReleasesOneCopyOfTheText() {
        String json = PLAIN.asJson(hookScript());

        ConfigMap first = SHARING.unmarshal(json, ConfigMap.class);
        ConfigMap second = SHARING.unmarshal(json, ConfigMap.class);

        assertThat(scriptOf(first)).isSameAs(DrainHook.SCRIPT);
        assertThat(scriptOf(second)).isSameAs(DrainHook.SCRIPT);
        assertThat(first).as("nothing else read differently").isEqualTo(PLAIN.unmarshal(json, ConfigMap.class));
    }

    @Test
    void podsOfAnInlineReleaseReadFromJsonHoldTheSameCopy() {
        String json = PLAIN.asJson(podOfAnInlineRelease());

        Pod read = SHARING.unmarshal(json, Pod.class);

        assertThat(hookCommand(read).get(2)).isSameAs(DrainHook.SCRIPT);
        assertThat(read).as("nothing else read differently").isEqualTo(PLAIN.unmarshal(json, Pod.class));
    }

    @Test
    void withoutItEveryObjectReadHoldsItsOwnCopy() {
        ConfigMap script = PLAIN.unmarshal(PLAIN.asJson(hookScript()), ConfigMap.class);
        Pod pod = PLAIN.unmarshal(PLAIN.asJson(podOfAnInlineRelease()), Pod.class);

        assertThat(scriptOf(script)).isEqualTo(DrainHook.SCRIPT).isNotSameAs(DrainHook.SCRIPT);
        assertThat(hookCommand(pod).get(2)).isEqualTo(DrainHook.SCRIPT).isNotSameAs(DrainHook.SCRIPT);
    }

    @Test
    void anotherTextOfTheSameLengthAndEveryOtherStringAreReadAsTheyAre() throws Exception {
        String other = "#" + DrainHook.SCRIPT.substring(1);
        ObjectMapper mapper = sharingMapper();

        List<String> read = mapper.readValue(
                mapper.writeValueAsString(List.of(other, "python3", "")), new TypeReference<List<String>>() {});

        assertThat(read).containsExactly(other, "python3", "");
        assertThat(read.get(0)).isNotSameAs(DrainHook.SCRIPT);
        assertThat(mapper.readValue("null", String.class)).isNull();
    }
}
