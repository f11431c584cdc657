// The real-model zoo that tests/models/make_zoo_models.py makes (the
// make_zoo_small / make_zoo_large ctest fixtures), by set.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracegraph::testing {

// The zoo, by set (the large one, over ~30M parameters, has its own ctest label).
inline const std::vector<std::string> kZooSmall = {
    "resnet18", "resnet50", "resnext50_32x4d", "densenet121", "squeezenet1_0", "squeezenet1_1", "inception_v3",
    "googlenet", "shufflenet_v2_x0_5", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "mnasnet0_5",
    "efficientnet_b0", "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "convnext_tiny", "swin_t",
    "vit_small_traced", "swin_small_traced", "resnet18_scripted", "mobilenet_v3_small_scripted",
    "shufflenet_v2_x0_5_scripted", "efficientnet_b0_scripted", "mnasnet0_5_scripted",
    "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "mc3_18",
    "unet2d_bn_relu_nearest_sigmoid_traced", "unet2d_bn_relu_nearest_sigmoid_scripted",
    "unet2d_gn_leaky_bilinear_softmax_traced", "unet2d_gn_leaky_bilinear_softmax_scripted",
    "unet2d_in_relu_bilinear_log_softmax_traced", "unet2d_in_relu_bilinear_log_softmax_scripted",
    "unet2d_in_prelu_transposed_reflect_tanh_traced", "unet2d_in_prelu_transposed_reflect_tanh_scripted",
    "unet2d_elu_replicate_clamp_traced", "unet2d_elu_replicate_clamp_scripted", "unet2d_valid_gelu_cat_traced",
    "unet2d_valid_gelu_cat_scripted", "unet3d_in_gelu_trilinear_sigmoid_traced",
    "unet3d_in_gelu_trilinear_sigmoid_scripted", "unet3d_bn_silu_nearest_dict_traced",
    "unet3d_bn_silu_nearest_dict_scripted", "unet3d_valid_relu_transposed_none_traced",
    "unet3d_valid_relu_transposed_none_scripted", "unet3d_sigmoid_then_trilinear_traced",
    "unet3d_sigmoid_then_trilinear_scripted", "unet1d_bn_relu_linear_sigmoid_traced",
    "unet1d_bn_relu_linear_sigmoid_scripted", "seg_logits_bilinear", "seg_sigmoid_bilinear_aligned",
    "sigmoid_then_pool", "sigmoid_then_bicubic", "write_through_slice_scripted", "write_through_slice_traced",
    "conv1d_net_traced", "conv1d_net_scripted",
    "channel_mean_head_scripted", "ffc_block_traced", "ffc_block_scripted", "afno_block_traced", "fno_block_traced",
    "spectrogram_net_traced",
};
inline const std::vector<std::string> kZooLarge = {
    "alexnet", "vgg11", "vgg11_bn", "wide_resnet50_2", "vit_b_16", "maxvit_t",
    "fcn_resnet50", "deeplabv3_resnet50", "r3d_18", "r2plus1d_18",
};

inline std::string zoo_path(const std::string& file) { return std::string(TRACEGRAPH_ZOO_DIR) + "/" + file; }

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing " + path + ": run the make_zoo fixture");
  return nlohmann::json::parse(in);
}

}  // namespace tracegraph::testing
