package dev.ebb.operator.bench;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.sim.LocalExec;
import io.fabric8.kubernetes.api.model.Pod;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;

/** Member reads through the test world's exec (the real read script, a local python3 per read): one at a time, then fifty at once. */
public final class MemberReads {
    private static final int ONE_AT_A_TIME = 20;
    private static final int AT_ONCE = 50;
    private static final int ROUNDS = 3;

    private MemberReads() {}

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(MemberReads::run);
    }

    public static void run() throws Exception {
        try (FakeMembers fakeMembers = new FakeMembers(AT_ONCE);
                LocalExec exec = new LocalExec()) {
            List<Pod> members = fakeMembers.pods();
            MemberReader reader = new MemberReader(exec, new SimpleMeterRegistry());
            List<Double> one = new ArrayList<>();
            for (int i = 0; i < ONE_AT_A_TIME; i++) {
                long start = System.nanoTime();
                reader.read(members.get(i), Engine.VLLM).await().indefinitely();
                one.add((System.nanoTime() - start) / 1e6);
            }
            List<Double> all = new ArrayList<>();
            for (int round = 0; round < ROUNDS; round++) {
                long start = System.nanoTime();
                reader.readAll(members, Engine.VLLM).await().indefinitely();
                all.add((System.nanoTime() - start) / 1e6);
            }
            System.out.printf(
                    "Member reads through the local exec (real read script, python3 per read), bound %d ms%n",
                    ExecLimits.MEMBER_READ.deadline().toMillis());
            Columns.header();
            Columns.row("one read at a time, " + ONE_AT_A_TIME + " (ms)", one);
            Columns.row(AT_ONCE + " at once, all done, " + ROUNDS + " rounds (ms)", all);
            System.out.println();
        }
    }
}
