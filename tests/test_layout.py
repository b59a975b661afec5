"""Multi-node layouts: which node launches are one job (dslint/launch/layout.py).

The grouping rule, case by case: same folder, launcher, program, node count and master port;
different ranks make one job; the same rank twice is a copied script only when the program's
arguments are the same, else look-alike jobs; and the run judges a node script with the other
scripts of its folder whichever of them it lists.
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


def test_a_launch_for_every_rank_joins_its_layout_without_a_rank(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, {"job/node0.sh": node(0), "job/workers.sh": node("$NODE_RANK")})
    assert groups(result) == [([("job/node0.sh", 0), ("job/workers.sh", None)], False)]
    assert result.diagnostics == []  # the missing ranks are the run-time launch's


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
