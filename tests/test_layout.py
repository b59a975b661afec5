"""Multi-node layouts: which node launches are one job (dslint/launch/layout.py).

The grouping rule, case by case: a launch whose rank is known only at run time, or that the
scheduler places (srun, mpirun, sbatch), is a whole job by itself; the others group by folder,
launcher, program, node count, master port and master host; different ranks make one job; the
same rank written twice is a copied script only when the program's arguments are the same, else
look-alike jobs; and the run judges a node script with the other scripts of its folder whichever
of them it lists.
"""

from __future__ import annotations

from pathlib import Path

from dslint.config import Settings
from dslint.run.engine import Engine

TORCHRUN = "torchrun --nnodes {n} --node_rank {rank} --master_addr 10.0.0.1 --master_port {port} --nproc_per_node 8 {program} {args}\n"


def node(rank=0, n=2, port=29500, program="train.py", args="--lr 1e-5"):
    return TORCHRUN.format(rank=rank, n=n, port=port, program=program, args=args)


def run(tmp_path: Path, monkeypatch, files: dict[str, str], paths=(".",), select=("DS313",)):
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = Engine(Settings(select=list(select), root=tmp_path)).lint_paths(list(paths))
    assert not result.internal_errors, result.internal_errors
    return result


def groups(result) -> list[tuple[list[tuple[str, int | None]], bool]]:
    return sorted(([(n.document.path, n.static_rank) for n in layout.nodes], layout.several_jobs) for layout in result.layouts)


def test_node_scripts_of_one_job_are_one_layout(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {"job/node0.sh": node(0), "job/node1.sh": node(1)})
    assert groups(result) == [([("job/node0.sh", 0), ("job/node1.sh", 1)], False)]
    assert result.layouts[0].world_size() == 16


def test_folder_program_node_count_and_port_keep_jobs_apart(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {
        "a/node0.sh": node(0), "b/node1.sh": node(1),  # another folder
        "c/node0.sh": node(0), "c/other.sh": node(1, program="eval.py"),  # another program
        "d/node0.sh": node(0), "d/big.sh": node(1, n=4),  # another node count
        "e/node0.sh": node(0), "e/alt.sh": node(1, port=29600),  # another master port
    })
    assert all(len(nodes) == 1 for nodes, _ in groups(result))
    assert len(result.layouts) == 8


def test_two_rank_0_templates_of_different_jobs_are_not_one_job(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {"poc/pretrain_7b.sh": node(0, args="--num-layers 32"),
                                          "poc/pretrain_13b.sh": node(0, args="--num-layers 40")})
    ((_, several),) = groups(result)
    assert several and result.diagnostics == []


def test_a_copied_script_with_its_rank_unchanged_is_one_job_with_a_mistake(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {"job/node0.sh": node(0), "job/node1.sh": node(0)})
    ((_, several),) = groups(result)
    assert not several
    assert [(d.code, d.path) for d in result.diagnostics] == [("DS313", "job/node1.sh")]


def test_more_launches_than_nodes_are_several_jobs(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {"job/a0.sh": node(0), "job/a1.sh": node(1), "job/b0.sh": node(0), "job/b1.sh": node(1)})
    ((_, several),) = groups(result)
    assert several and result.diagnostics == []


def test_a_launch_whose_rank_is_known_at_run_time_is_a_whole_job_by_itself(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {"job/node0.sh": node(0), "job/workers.sh": node("$NODE_RANK")})
    assert groups(result) == [([("job/node0.sh", 0)], False), ([("job/workers.sh", None)], False)]
    assert [layout.alone for layout in sorted(result.layouts, key=lambda one: one.nodes[0].document.path)] == [False, True]
    assert result.diagnostics == []


SBATCH = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
srun torchrun --nnodes 2 --node_rank {rank} --master_addr $MASTER_ADDR --master_port 29500 --nproc_per_node {procs} train.py {args}
"""


def test_two_batch_jobs_are_two_jobs_not_two_nodes_of_one(tmp_path, monkeypatch):
    # each sbatch script is a whole multi-node job: srun starts it on every node of its allocation
    files = {"jobs/big.sh": SBATCH.format(rank="$SLURM_NODEID", procs=8, args="--model big"),
             "jobs/small.sh": SBATCH.format(rank="$SLURM_NODEID", procs=4, args="--model small")}
    result = run(tmp_path, monkeypatch, files, select=("DS313", "DS314", "DS315", "DS317"))
    assert groups(result) == [([("jobs/big.sh", None)], False), ([("jobs/small.sh", None)], False)]
    assert all(layout.alone and layout.world_size() is None for layout in result.layouts)
    assert result.diagnostics == []


def test_a_rank_written_under_the_scheduler_does_not_make_a_node_of_another_script(tmp_path, monkeypatch):
    files = {"jobs/a.sh": SBATCH.format(rank=0, procs=8, args=""),  # srun inside a batch job
             "jobs/b.sh": SBATCH.format(rank=1, procs=4, args="").replace("srun ", ""),  # the batch job alone
             "jobs/c.sh": "srun -N 2 " + node(1, args="")}  # srun alone
    result = run(tmp_path, monkeypatch, files, select=("DS313", "DS314"))
    assert len(result.layouts) == 3 and all(layout.alone for layout in result.layouts)
    why = {layout.nodes[0].document.path: layout.why for layout in result.layouts}
    assert "srun starts it (jobs/a.sh:4)" in why["jobs/a.sh"] and "sbatch job (#SBATCH at jobs/b.sh:2)" in why["jobs/b.sh"]
    assert "srun starts it (jobs/c.sh:1)" in why["jobs/c.sh"]
    assert result.diagnostics == []


def test_node_scripts_that_meet_at_different_hosts_are_different_jobs(tmp_path, monkeypatch):
    other = TORCHRUN.replace("10.0.0.1", "10.0.0.2")
    result = run(tmp_path, monkeypatch, {"job/a0.sh": node(0), "job/a1.sh": node(1),
                                          "job/b0.sh": other.format(rank=0, n=2, port=29500, program="train.py", args="--lr 1e-5"),
                                          "job/b1.sh": other.format(rank=1, n=2, port=29500, program="train.py", args="--lr 1e-5")})
    assert groups(result) == [([("job/a0.sh", 0), ("job/a1.sh", 1)], False), ([("job/b0.sh", 0), ("job/b1.sh", 1)], False)]
    assert [layout.world_size() for layout in result.layouts] == [16, 16]


def test_a_node_left_at_the_default_address_stays_a_node_of_its_job(tmp_path, monkeypatch):
    forgot = node(1).replace("--master_addr 10.0.0.1 ", "")
    result = run(tmp_path, monkeypatch, {"job/node0.sh": node(0), "job/node1.sh": forgot}, select=("DS313", "DS315"))
    assert groups(result) == [([("job/node0.sh", 0), ("job/node1.sh", 1)], False)]
    assert [(d.code, d.path, d.severity.name) for d in result.diagnostics] == [("DS315", "job/node1.sh", "ERROR")]


def test_launches_that_each_start_the_default_rank_are_not_tied(tmp_path, monkeypatch):
    unranked = node(0).replace("--node_rank 0 ", "")
    result = run(tmp_path, monkeypatch, {"job/a.sh": unranked, "job/b.sh": unranked})
    ((_, several),) = groups(result)
    assert several and result.diagnostics == []  # no "rank 0 twice": nothing says they are one job's nodes


def test_one_node_script_is_judged_with_the_others_of_its_folder(tmp_path, monkeypatch):
    files = {"job/node0.sh": node(0), "job/node1.sh": node(0), "job/notes.txt": "node_rank 0\n"}
    whole = run(tmp_path, monkeypatch, files)
    alone = run(tmp_path, monkeypatch, files, paths=("job/node1.sh",))
    assert [(d.code, d.path, d.message) for d in alone.diagnostics] == [(d.code, d.path, d.message) for d in whole.diagnostics]
    other = run(tmp_path, monkeypatch, files, paths=("job/node0.sh",))
    assert [(d.code, d.path) for d in other.diagnostics] == [("DS313", "job/node0.sh")]  # never about a file not in the run


def test_nodes_that_split_one_machines_devices_are_read_as_sharing_it(tmp_path, monkeypatch):
    edge = "export ASCEND_RT_VISIBLE_DEVICES=0\n" + node(0, program="posttrain_gpt.py").replace("10.0.0.1", "localhost")
    cloud = "export ASCEND_RT_VISIBLE_DEVICES=1,2,3\n" + node(1, program="posttrain_gpt.py").replace("10.0.0.1", "localhost")
    result = run(tmp_path, monkeypatch, {"st/edge.sh": edge, "st/cloud.sh": cloud}, select=("DS313", "DS314", "DS315", "DS317"))
    from dslint.launch.layout import colocated

    assert colocated(result.layouts[0]) and result.diagnostics == []


def test_accelerate_configs_no_launch_names_group_by_folder(tmp_path, monkeypatch):
    config = ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmachine_rank: {rank}\n"
              "main_process_ip: 10.0.0.1\nmain_process_port: 29500\nnum_machines: 2\nnum_processes: 16\n")
    result = run(tmp_path, monkeypatch, {"acc/rank0.yaml": config.format(rank=0), "acc/rank1.yaml": config.format(rank=1),
                                          "acc/single.yaml": config.format(rank=0).replace("num_machines: 2", "num_machines: 1")})
    assert groups(result) == [([("acc/rank0.yaml", 0), ("acc/rank1.yaml", 1)], False)]
    assert result.layouts[0].world_size() == 16
