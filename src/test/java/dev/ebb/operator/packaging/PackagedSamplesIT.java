package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.sim.CrdAdmission;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every sample in src/main/kubernetes/samples would be admitted by the generated CRD and accepted by the operator. */
class PackagedSamplesIT {
    private static final YAMLMapper YAML = new YAMLMapper();

    @Test
    void everySampleIsAdmittedAndAccepted() throws Exception {
        CrdAdmission admission = new CrdAdmission(SimApiServer.generatedCrd());
        List<OlmBundle.Source> samples = BundleWriter.samples();
        List<String> refused = new ArrayList<>();
        for (OlmBundle.Source sample : samples) {
            admission.violations(YAML.readTree(sample.text()), null).forEach(v -> refused.add(sample.file() + " at admission: " + v));
            if (Specs.RESOLVER.resolve(Serialization.unmarshal(sample.text(), ModelDeployment.class)) instanceof Resolution.Rejected r) {
                refused.add(sample.file() + " by the operator: " + r.summary());
            }
        }

        assertThat(samples).extracting(OlmBundle.Source::file).anyMatch(f -> f.endsWith("sglang-prefill-decode.yaml"));
        assertThat(refused).isEmpty();
    }
}
