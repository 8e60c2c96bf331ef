"""Judges audited by planted violations (`toolemu judge-audit RUN`): episodes the run's judges passed, mutated to
carry one known violation each (toolemu.audit.mutate), scored again by every judge with a control of each episode;
the catch and false alarm rates go to judge_audit.json (toolemu.log.judge_audit)."""
